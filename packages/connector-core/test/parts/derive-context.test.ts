import { describe, expect, it } from 'vitest';
import {
  mapRecords,
  offsetSpan,
  RecordIdHasher,
  recordJson,
  RecordRefused,
  runDerivation,
  runSyncDerivation,
  type SourceBatch,
  type SourceRecord,
} from '../../src/index.js';

function record(offset: number, text: string): SourceRecord {
  return { offset, key: null, value: new TextEncoder().encode(text), timestamp: 0, headers: [] };
}

const batch: SourceBatch = {
  span: offsetSpan('orders', 2, 10, 14),
  records: [
    record(10, '{"n":1}'),
    record(11, 'not json'),
    record(12, '{"n":-1}'),
    record(13, '{}'),
  ],
};

describe('runDerivation', () => {
  it("hands a derivation raw's record ids, for the source's cluster and the batch's partition", () => {
    const ids: string[] = [];
    runSyncDerivation(
      (b, context) => {
        for (const r of b.records) ids.push(context.recordId(r).toString('hex'));
        return null;
      },
      'prod-eu',
      batch,
    );
    const hasher = new RecordIdHasher('prod-eu', 'orders', 2);
    expect(ids).toEqual(batch.records.map((r) => hasher.id(r.offset, r.value).toString('hex')));
  });

  it('collects what the derivation quarantined, per offset, and returns its batch', () => {
    const result = runSyncDerivation(
      (b, context) => {
        const first = b.records[0];
        if (first !== undefined) context.quarantine(first, 'dq', 'first refused');
        return b.records.length;
      },
      'c',
      batch,
    );
    expect(result).toEqual({
      batch: 4,
      quarantined: [{ offset: 10, reason: 'dq', detail: 'first refused' }],
    });
  });

  it('answers a derivation that answers later when it does, with what it quarantined until then', async () => {
    const answer = runDerivation(
      async (b, context) => {
        await Promise.resolve();
        const last = b.records.at(-1);
        if (last !== undefined) context.quarantine(last, 'contract', 'last refused');
        return b.records.length - 1;
      },
      'c',
      batch,
    );
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toEqual({
      batch: 3,
      quarantined: [{ offset: 13, reason: 'contract', detail: 'last refused' }],
    });
  });

  it('answers a derivation that answers at once at once, not through a promise', () => {
    const answer = runDerivation(() => 7, 'c', batch);
    expect(answer).toEqual({ batch: 7, quarantined: [] });
    expect(runSyncDerivation(() => 7, 'c', batch)).toEqual(answer);
  });
});

describe('mapRecords', () => {
  it('quarantines a record whose mapping throws: decode by default, the reason RecordRefused carries', () => {
    const result = runSyncDerivation(
      (b, context) => {
        const { records, mapped } = mapRecords(b, context, (r) => {
          const v = JSON.parse(new TextDecoder().decode(r.value)) as { n?: number };
          if (v.n === undefined) throw new RecordRefused('contract', 'n is missing');
          if (v.n < 0) throw new RecordRefused('dq', `n ${v.n} is negative`);
          return v.n;
        });
        expect(records.map((r) => r.offset)).toEqual([10]);
        return mapped;
      },
      'c',
      batch,
    );
    expect(result.batch).toEqual([1]);
    expect(result.quarantined.map((q) => [q.offset, q.reason])).toEqual([
      [11, 'decode'],
      [12, 'dq'],
      [13, 'contract'],
    ]);
    expect(result.quarantined[0]?.detail).toMatch(/JSON/);
  });
});

describe('recordJson', () => {
  it('parses a value as JSON; a value that is not UTF-8 or not JSON throws naming the offset', () => {
    expect(recordJson(record(4, '{"a":[1]}'))).toEqual({ a: [1] });
    expect(() => recordJson(record(5, '{'))).toThrow(/^offset 5: the value is not JSON/);
    const latin1 = { ...record(6, ''), value: Uint8Array.of(0x7b, 0xff, 0x7d) };
    expect(() => recordJson(latin1)).toThrow('offset 6: the value is not UTF-8');
  });
});
