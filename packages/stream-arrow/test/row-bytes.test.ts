import {
  Binary,
  Bool,
  DateDay,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  Null,
  Schema,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  makeData,
  type Data,
  type DataType,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { planRows } from '../src/row-json.js';
import { textRows } from './row-text-reference.js';

/** mulberry32: the same seed, the same batches. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Byte pieces a utf8 value is made of: plain, needing escapes, multi-byte, and invalid UTF-8. */
const CLEAN = [
  'a',
  'row-17;',
  ' ',
  '~',
  '\x7f',
  'é',
  '🙂',
  '\u2028',
  '\ufeff',
  '\uffff',
  '中文',
].map((s) => [...Buffer.from(s, 'utf8')]);
const DIRTY = [
  [0x22],
  [0x5c],
  [0x0a],
  [0x00],
  [0x1f],
  [0x09],
  [0xff],
  [0x80],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xc0, 0xaf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf0, 0x9f, 0x99],
];

class Batches {
  constructor(readonly random: () => number) {}

  int(max: number): number {
    return Math.floor(this.random() * max);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A validity bitmap with some nulls (or none), and its null count. */
  nulls(length: number): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    if (this.random() < 0.3) return { nullBitmap: undefined, nullCount: 0 };
    const bitmap = new Uint8Array(Math.ceil(length / 8));
    let nullCount = 0;
    for (let i = 0; i < length; i++) {
      if (this.random() < 0.8) bitmap[i >> 3]! |= 1 << (i & 7);
      else nullCount++;
    }
    return { nullBitmap: bitmap, nullCount };
  }

  fixed(type: DataType, length: number, data: ArrayBufferView): Data {
    return makeData({ type, length, ...this.nulls(length), data } as never);
  }

  bytesColumn(type: DataType, length: number, piece: () => number[]): Data {
    const valueOffsets = new Int32Array(length + 1);
    const bytes: number[] = [];
    for (let i = 0; i < length; i++) {
      const pieces = this.int(4) === 0 ? 0 : this.int(12);
      for (let p = 0; p < pieces; p++) bytes.push(...piece());
      valueOffsets[i + 1] = bytes.length;
    }
    return makeData({
      type,
      length,
      ...this.nulls(length),
      valueOffsets,
      data: Uint8Array.from(bytes),
    } as never);
  }

  utf8(length: number): Data {
    const clean = this.random() < 0.5;
    return this.bytesColumn(new Utf8(), length, () =>
      clean || this.random() < 0.8 ? this.pick(CLEAN) : this.pick(DIRTY),
    );
  }

  wide(length: number, signed: boolean): BigInt64Array | BigUint64Array {
    const edges = [0n, 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 32n];
    const values = signed ? new BigInt64Array(length) : new BigUint64Array(length);
    for (let i = 0; i < length; i++) {
      const r = this.int(4);
      const v =
        r === 0
          ? this.pick(edges)
          : r === 1
            ? BigInt(this.int(2 ** 21)) << 32n
            : BigInt.asUintN(64, BigInt(this.int(2 ** 32)) * BigInt(this.int(2 ** 32)) + 7n);
      const sign = signed && this.random() < 0.5 ? -1n : 1n;
      values[i] = signed ? BigInt.asIntN(64, sign * v) : BigInt.asUintN(64, v);
    }
    return values;
  }

  floats(length: number): Float64Array {
    const special = [0, -0, Number.NaN, Infinity, -Infinity, 5e-324, 1e21, 1e-7, 0.1, 2 ** 53];
    const values = new Float64Array(length);
    const bits = new Uint32Array(values.buffer);
    for (let i = 0; i < length; i++) {
      if (this.random() < 0.3) values[i] = this.pick(special);
      else {
        bits[2 * i] = this.int(2 ** 32);
        bits[2 * i + 1] = this.int(2 ** 32);
      }
    }
    return values;
  }

  ints(length: number, min: number, max: number): number[] {
    return Array.from({ length }, () =>
      this.random() < 0.2 ? this.pick([min, max, 0, -1]) : min + this.int(max - min + 1),
    );
  }

  /** Every type planRows reads, each column with its own nulls. */
  columns(length: number): [string, DataType, Data][] {
    const ints = (min: number, max: number) => this.ints(length, min, max);
    const stamp = () => this.wide(length, true) as BigInt64Array;
    const f64 = this.floats(length);
    return [
      ['i8', new Int8(), this.fixed(new Int8(), length, Int8Array.from(ints(-128, 127)))],
      ['u8', new Uint8(), this.fixed(new Uint8(), length, Uint8Array.from(ints(0, 255)))],
      ['i16', new Int16(), this.fixed(new Int16(), length, Int16Array.from(ints(-32768, 32767)))],
      ['u16', new Uint16(), this.fixed(new Uint16(), length, Uint16Array.from(ints(0, 65535)))],
      [
        'i32',
        new Int32(),
        this.fixed(new Int32(), length, Int32Array.from(ints(-(2 ** 31), 2 ** 31 - 1))),
      ],
      [
        'u32',
        new Uint32(),
        this.fixed(new Uint32(), length, Uint32Array.from(ints(0, 2 ** 32 - 1))),
      ],
      ['i64', new Int64(), this.fixed(new Int64(), length, this.wide(length, true))],
      ['u64', new Uint64(), this.fixed(new Uint64(), length, this.wide(length, false))],
      ['f64', new Float64(), this.fixed(new Float64(), length, f64)],
      ['f32', new Float32(), this.fixed(new Float32(), length, Float32Array.from(f64))],
      ['b', new Bool(), this.fixed(new Bool(), length, Uint8Array.from(ints(0, 255)))],
      ['n', new Null(), makeData({ type: new Null(), length })],
      ['s', new Utf8(), this.utf8(length)],
      ['"é\\\n', new Utf8(), this.utf8(length)],
      // Up to 8 bytes a piece, so long values take the native base64 write too.
      [
        'bin',
        new Binary(),
        this.bytesColumn(new Binary(), length, () =>
          Array.from({ length: 1 + this.int(8) }, () => this.int(256)),
        ),
      ],
      [
        'd',
        new DateDay(),
        this.fixed(new DateDay(), length, Int32Array.from(ints(-(2 ** 31), 2 ** 31 - 1))),
      ],
      ['ts', new TimestampSecond(), this.fixed(new TimestampSecond(), length, stamp())],
      [
        'tms',
        new TimestampMillisecond('UTC'),
        this.fixed(new TimestampMillisecond('UTC'), length, stamp()),
      ],
      ['tus', new TimestampMicrosecond(), this.fixed(new TimestampMicrosecond(), length, stamp())],
      [
        'tns',
        new TimestampNanosecond('+01:00'),
        this.fixed(new TimestampNanosecond('+01:00'), length, stamp()),
      ],
    ];
  }
}

/** The new byte rendering of rows `[start, end)` and the old text one, UTF-8 encoded. */
function both(fields: [string, DataType, Data][], start: number, end: number) {
  const schema = new Schema(fields.map(([name, type]) => new Field(name, type, true)));
  const datas = fields.map(([, , d]) => d);
  const { bytes, ends } = planRows(schema).bind(datas)(start, end);
  const text = textRows(schema, datas);
  const expected: Buffer[] = [];
  for (let row = start; row < end; row++) expected.push(Buffer.from(text(row), 'utf8'));
  const got = Array.from({ length: end - start }, (_, i) =>
    Buffer.from(bytes.subarray(ends[i - 1] ?? 0, ends[i])),
  );
  return { got, expected };
}

describe('row-bytes: the byte renderer writes exactly what the text renderer did', () => {
  it('random batches of every type, with nulls, escapes, unicode and invalid UTF-8', () => {
    const batches = new Batches(prng(0x7e57));
    let dirty = 0;
    for (let round = 0; round < 300; round++) {
      const length = 1 + batches.int(40);
      const fields = batches.columns(length);
      const start = batches.random() < 0.5 ? 0 : batches.int(length);
      const { got, expected } = both(fields, start, length);
      for (const [i, e] of expected.entries()) {
        if (e.includes(0x5c) || e.includes(Buffer.from('\ufffd'))) dirty++;
        expect(got[i]!.toString('hex'), `round ${round} row ${start + i}`).toBe(e.toString('hex'));
      }
    }
    // The slow path was taken, so both paths were compared.
    expect(dirty).toBeGreaterThan(100);
  });

  it('one column at a time, so a clean column takes the copy path beside no dirty one', () => {
    const batches = new Batches(prng(42));
    for (let round = 0; round < 200; round++) {
      const length = 1 + batches.int(30);
      const field = batches.pick(batches.columns(length));
      const { got, expected } = both([field], 0, length);
      expect(got.map((b) => b.toString('hex'))).toEqual(expected.map((b) => b.toString('hex')));
    }
  });

  it('values split inside a UTF-8 character, and a schema of no columns', () => {
    const euro = Buffer.from('€€', 'utf8');
    const split = makeData({
      type: new Utf8(),
      length: 3,
      valueOffsets: Int32Array.of(0, 1, 4, 6),
      data: Uint8Array.from(euro),
    });
    const { got, expected } = both([['s', new Utf8(), split]], 0, 3);
    expect(got).toEqual(expected);
    expect(got[0]!.toString()).toBe('{"s":"\ufffd"}');
    const empty = planRows(new Schema([])).bind([])(0, 2);
    expect(empty.bytes.toString()).toBe('{}{}');
    expect([...empty.ends]).toEqual([2, 4]);
  });
});
