import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IcebergError, readAvroContainer } from '../src/index.js';
import * as A from './support/avro-bytes.js';

const SCHEMA = {
  type: 'record',
  name: 'everything',
  namespace: 'test',
  fields: [
    { name: 'i', type: 'int' },
    { name: 'l', type: 'long' },
    { name: 's', type: 'string' },
    { name: 'f', type: 'float' },
    { name: 'd', type: 'double' },
    { name: 'flag', type: 'boolean' },
    { name: 'e', type: { type: 'enum', name: 'colour', symbols: ['RED', 'GREEN'] } },
    { name: 'fx', type: { type: 'fixed', name: 'two', size: 2 } },
    { name: 'fx2', type: 'two' },
    { name: 'by', type: 'bytes' },
    { name: 'arr', type: { type: 'array', items: 'int' } },
    { name: 'm', type: { type: 'map', values: 'long' } },
    { name: 'u', type: ['null', 'string'] },
    { name: 'ts', type: { type: 'long', logicalType: 'timestamp-micros' } },
  ],
};

function row(n: number, u: string | null): Uint8Array {
  return A.concat(
    A.int(-n),
    A.long(2n ** 63n - 1n - BigInt(n)),
    A.str(`héllo ${n}`),
    A.float(1.5),
    A.double(-2.25),
    A.boolean(n % 2 === 1),
    A.int(n % 2),
    Uint8Array.of(n, n + 1),
    Uint8Array.of(9, 9),
    A.bytes(Uint8Array.of(1, 2, 3)),
    A.block([A.int(1), A.int(-300)]),
    A.block([A.concat(A.str('k'), A.long(-(2n ** 63n)))]),
    u === null ? A.union(0) : A.union(1, A.str(u)),
    A.long(1_700_000_000_000_000),
  );
}

function expected(n: number, u: string | null): unknown {
  return {
    i: n === 0 ? 0 : -n,
    l: 2n ** 63n - 1n - BigInt(n),
    s: `héllo ${n}`,
    f: 1.5,
    d: -2.25,
    flag: n % 2 === 1,
    e: n % 2 === 0 ? 'RED' : 'GREEN',
    fx: Uint8Array.of(n, n + 1),
    fx2: Uint8Array.of(9, 9),
    by: Uint8Array.of(1, 2, 3),
    arr: [1, -300],
    m: new Map([['k', -(2n ** 63n)]]),
    u,
    ts: 1_700_000_000_000_000n,
  };
}

const FILE = 's3://b/manifest.avro';
const twoBlocks = (codec: string): Uint8Array =>
  A.container({
    schema: SCHEMA,
    codec,
    blocks: [
      { count: 2, data: A.concat(row(0, null), row(1, 'x')) },
      { count: 1, data: row(2, 'y') },
    ],
  });

describe('readAvroContainer', () => {
  it.each(['null', 'deflate'])('reads every type of a %s-codec file, block by block', (codec) => {
    const { header, records } = readAvroContainer(twoBlocks(codec), FILE);
    expect(header.codec).toBe(codec);
    expect(header.schema).toEqual(SCHEMA);
    expect(records).toEqual([expected(0, null), expected(1, 'x'), expected(2, 'y')]);
  });

  it('refuses a sync marker that differs from the header, naming the file and its byte offset', () => {
    const good = twoBlocks('null');
    const bad = A.container({
      schema: SCHEMA,
      blocks: [
        { count: 2, data: A.concat(row(0, null), row(1, 'x')) },
        { count: 1, data: row(2, 'y') },
      ],
      blockSync: (i) => (i === 1 ? new Uint8Array(16) : A.SYNC),
    });
    const syncAt = good.length - 16;
    expect(() => readAvroContainer(bad, FILE)).toThrow(
      `TWG_ICEBERG_AVRO_CORRUPT: ${FILE}: byte ${syncAt}: sync marker does not match the header`,
    );
  });

  it('refuses a file without the Avro magic', () => {
    const bytes = twoBlocks('null');
    bytes[1] = 0;
    expect(() => readAvroContainer(bytes, FILE)).toThrow(
      /byte 1: not an Avro object container file/,
    );
  });

  it('refuses codecs it does not read, by name', () => {
    const bytes = A.container({ schema: 'int', codec: 'snappy', blocks: [] });
    expect(() => readAvroContainer(bytes, FILE)).toThrow(
      expect.objectContaining({
        code: 'TWG_ICEBERG_UNSUPPORTED',
        message: expect.stringContaining('"snappy"') as unknown,
      }),
    );
  });

  it('names where a truncated file ends', () => {
    const bytes = twoBlocks('null');
    expect(() => readAvroContainer(bytes.subarray(0, bytes.length - 20), FILE)).toThrow(
      /TWG_ICEBERG_AVRO_CORRUPT: .*byte \d+: needs \d+ more bytes/,
    );
  });

  it('refuses a block whose records end before its declared size', () => {
    const bytes = A.container({
      schema: 'int',
      blocks: [{ count: 1, data: A.concat(A.int(1), A.int(2)) }],
    });
    expect(() => readAvroContainer(bytes, FILE)).toThrow(/end 1 bytes before its end/);
  });

  it('refuses a schema naming an unknown type before reading data', () => {
    const bytes = A.container({
      schema: { type: 'record', name: 'r', fields: [{ name: 'x', type: 'nope' }] },
      blocks: [],
    });
    expect(() => readAvroContainer(bytes, FILE)).toThrow(/avro.schema: unknown type "nope"/);
  });

  it('on any corruption of a valid file, reads or fails with its own coded error', () => {
    const valid = twoBlocks('deflate');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.nat(valid.length),
        (flips, cut) => {
          const bytes = valid.slice(0, Math.max(cut, 4));
          for (const [at, v] of flips) if (at < bytes.length) bytes[at] = v;
          try {
            readAvroContainer(bytes, FILE);
          } catch (e) {
            expect(e).toBeInstanceOf(IcebergError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
