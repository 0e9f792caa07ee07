import { offsetSpan, type SourceHeader } from '@thalweg/connector-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeRawBatch, RawRows } from '../src/index.js';
import { NULL_LENGTH, readHeaders } from '@thalweg/stream-arrow';
import { CLUSTER, record } from './helpers.js';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return [...b];
};

/** The bytes raw stores for one record's headers, as the packer writes them. */
function encoded(headers: readonly SourceHeader[], tombstone: boolean): Uint8Array {
  const r = record(0, { headers, ...(tombstone ? { value: new Uint8Array(0), tombstone } : {}) });
  const rows = RawRows.of(
    encodeRawBatch(CLUSTER, { span: offsetSpan('t', 0, 0, 1), records: [r] }),
  );
  return rows.headerBytes(0);
}

describe('headers codec', () => {
  it('reads the layout written before null values and tombstones were kept, unchanged', () => {
    // name "a" = "x", name "__proto__" = "" : u32 lengths, big-endian.
    const old = Uint8Array.from([
      ...u32(1),
      ...Buffer.from('a'),
      ...u32(1),
      ...Buffer.from('x'),
      ...u32(9),
      ...Buffer.from('__proto__'),
      ...u32(0),
    ]);
    const decoded = readHeaders(old);
    expect(decoded.tombstone).toBe(false);
    expect(decoded.headers.map(([n, v]) => [n, v === null ? null : [...v]])).toEqual([
      ['a', [...Buffer.from('x')]],
      ['__proto__', []],
    ]);
    expect(readHeaders(new Uint8Array(0))).toEqual({ headers: [], tombstone: false });
    expect([...encoded([['a', Buffer.from('x')]], false)]).toEqual([...old.subarray(0, 10)]);
  });

  it('marks a null value and a tombstone with the reserved length', () => {
    expect([...encoded([['n', null]], true)]).toEqual([
      ...u32(NULL_LENGTH),
      ...u32(1),
      ...Buffer.from('n'),
      ...u32(NULL_LENGTH),
    ]);
  });

  it('round-trips any header list and tombstone mark through the packer', () => {
    const header = fc.tuple(
      fc.string({ unit: 'binary', maxLength: 10 }),
      fc.option(fc.uint8Array({ maxLength: 40 }), { nil: null }),
    );
    fc.assert(
      fc.property(fc.array(header, { maxLength: 8 }), fc.boolean(), (headers, tombstone) => {
        const decoded = readHeaders(encoded(headers, tombstone));
        expect(decoded.tombstone).toBe(tombstone);
        expect(decoded.headers.map(([n, v]) => [n, v === null ? null : [...v]])).toEqual(
          headers.map(([n, v]) => [n, v === null ? null : [...v]]),
        );
      }),
    );
  });

  it('reads any bytes as headers or refuses them with a reason, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          const { headers } = readHeaders(bytes);
          for (const [name, value] of headers) {
            expect(typeof name).toBe('string');
            expect(value === null || value instanceof Uint8Array).toBe(true);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
          expect((error as Error).message).toMatch(/^header|headers end|The encoded data/);
        }
      }),
    );
  });
});
