import type { SourceHeader } from '@thalweg/connector-core';
import type { SourceFeatures, WrittenRecord } from './source-subject.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Records per partition the source contract writes. */
export const SOURCE_CONTRACT_RECORDS = 12;

/**
 * The records the contract writes: per partition, distinct payloads; with
 * keys, a null key every third record; with headers, a list with a
 * repeated name, names a prototype holds (`constructor`, `__proto__`) and
 * an integer-like one (which an object would reorder), a null value where
 * the origin carries one; with tombstones, every fifth record a delete.
 */
export function sourceContractRecords(features: SourceFeatures): WrittenRecord[][] {
  return Array.from({ length: features.partitions }, (_, p) =>
    Array.from({ length: SOURCE_CONTRACT_RECORDS }, (_, i): WrittenRecord => {
      const headers: SourceHeader[] = features.headers
        ? [
            ['trace', utf8(`t${p}.${i}`)],
            ['constructor', utf8('c')],
            ['2', utf8('two')],
            ['trace', utf8('again')],
            ['__proto__', utf8('')],
          ]
        : [];
      if (features.headers && features.nullHeaderValues && i % 2 === 0)
        headers.push(['bare', null]);
      const key = features.keys && i % 3 !== 2 ? utf8(`k${p}.${i}`) : null;
      if (features.tombstones && i % 5 === 4) {
        return { key, value: new Uint8Array(0), headers, tombstone: true };
      }
      return { key, value: utf8(JSON.stringify({ p, i, text: `record ${i} of ${p}` })), headers };
    }),
  );
}
