import {
  Binary,
  Bool,
  DateDay,
  Field,
  Float16,
  Float32,
  Float64,
  Int16,
  Int64,
  Int8,
  Null,
  RecordBatch,
  Schema,
  Struct,
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
  vectorFromArray,
  type Data,
  type DataType,
  type Timestamp,
} from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoDate, isoTimestamp } from '../src/iso-time.js';
import { planRows } from '../src/row-json.js';

function render(fields: [string, DataType, Data][]): string[] {
  const schema = new Schema(fields.map(([name, type]) => new Field(name, type, true)));
  const length = fields[0]![2].length;
  const batch = new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length, children: fields.map(([, , d]) => d) }),
  );
  const { bytes, ends } = planRows(batch.schema).bind(fields.map(([, , d]) => d))(0, length);
  return Array.from({ length }, (_, i) => bytes.toString('utf8', ends[i - 1] ?? 0, ends[i]));
}

const data = (type: DataType, values: unknown[]): Data =>
  vectorFromArray(values as never, type as never).data[0]!;
const bigints = (type: Timestamp, values: bigint[]): Data =>
  makeData({ type, length: values.length, data: BigInt64Array.from(values) });

describe('row-json: every accepted type, losslessly', () => {
  it('integers: 64-bit ones as decimal strings, exact at their extremes', () => {
    const rows = render([
      ['i8', new Int8(), data(new Int8(), [-128, 127])],
      ['u8', new Uint8(), data(new Uint8(), [0, 255])],
      ['i16', new Int16(), data(new Int16(), [-32768, 32767])],
      ['u16', new Uint16(), data(new Uint16(), [0, 65535])],
      ['u32', new Uint32(), data(new Uint32(), [0, 4294967295])],
      ['i64', new Int64(), data(new Int64(), [-(2n ** 63n), 2n ** 63n - 1n])],
      ['u64', new Uint64(), data(new Uint64(), [0n, 2n ** 64n - 1n])],
    ]);
    expect(rows).toEqual([
      '{"i8":-128,"u8":0,"i16":-32768,"u16":0,"u32":0,"i64":"-9223372036854775808","u64":"0"}',
      '{"i8":127,"u8":255,"i16":32767,"u16":65535,"u32":4294967295,"i64":"9223372036854775807","u64":"18446744073709551615"}',
    ]);
  });

  it('floats: shortest round-trip form, -0 kept, non-finite values as strings', () => {
    const f64 = [0.1, -0, Number.NaN, Infinity, -Infinity, 1e21, 5e-324];
    const rows = render([
      ['d', new Float64(), data(new Float64(), f64)],
      [
        'f',
        new Float32(),
        data(new Float32(), [0.1, -0, Number.NaN, Infinity, -Infinity, 3.4e38, 1e-45]),
      ],
    ]);
    expect(rows).toEqual([
      '{"d":0.1,"f":0.10000000149011612}',
      '{"d":-0,"f":-0}',
      '{"d":"NaN","f":"NaN"}',
      '{"d":"Infinity","f":"Infinity"}',
      '{"d":"-Infinity","f":"-Infinity"}',
      '{"d":1e+21,"f":3.3999999521443642e+38}',
      '{"d":5e-324,"f":1.401298464324817e-45}',
    ]);
    for (const [i, r] of rows.entries()) {
      const parsed = JSON.parse(r) as { f: number | string };
      if (typeof parsed.f === 'number')
        expect(Math.fround(parsed.f)).toBe(Math.fround([0.1, -0, 0, 0, 0, 3.4e38, 1e-45][i]!));
    }
  });

  it('utf8 as a JSON string, binary as base64, bool, null and nulls', () => {
    const rows = render([
      ['s', new Utf8(), data(new Utf8(), ['a "q" \\ \n\u0001 é 🙂', '', null])],
      ['b', new Binary(), data(new Binary(), [Uint8Array.of(0, 255, 1), new Uint8Array(0), null])],
      ['t', new Bool(), data(new Bool(), [true, false, null])],
      ['n', new Null(), data(new Null(), [null, null, null])],
    ]);
    expect(rows.map((r) => JSON.parse(r) as unknown)).toEqual([
      { s: 'a "q" \\ \n\u0001 é 🙂', b: 'AP8B', t: true, n: null },
      { s: '', b: '', t: false, n: null },
      { s: null, b: null, t: null, n: null },
    ]);
  });

  it('dates and timestamps in ISO 8601 at their unit, Z only with a time zone', () => {
    const dates = makeData({
      type: new DateDay(),
      length: 4,
      data: Int32Array.of(0, -1, 2147483647, -719528),
    });
    const rows = render([
      ['d', new DateDay(), dates],
      [
        's',
        new TimestampSecond(),
        bigints(new TimestampSecond(), [0n, -1n, 253402300799n, 253402300800n]),
      ],
      [
        'ms',
        new TimestampMillisecond('UTC'),
        bigints(new TimestampMillisecond('UTC'), [1n, -1n, 0n, 0n]),
      ],
      [
        'us',
        new TimestampMicrosecond('Europe/Paris'),
        bigints(new TimestampMicrosecond('Europe/Paris'), [1_700_000_000_123_456n, -1n, 0n, 0n]),
      ],
      [
        'ns',
        new TimestampNanosecond('+05:00'),
        bigints(new TimestampNanosecond('+05:00'), [2n ** 63n - 1n, -(2n ** 63n), 1n, -1n]),
      ],
    ]);
    expect(rows).toEqual([
      '{"d":"1970-01-01","s":"1970-01-01T00:00:00","ms":"1970-01-01T00:00:00.001Z","us":"2023-11-14T22:13:20.123456Z","ns":"2262-04-11T23:47:16.854775807Z"}',
      '{"d":"1969-12-31","s":"1969-12-31T23:59:59","ms":"1969-12-31T23:59:59.999Z","us":"1969-12-31T23:59:59.999999Z","ns":"1677-09-21T00:12:43.145224192Z"}',
      '{"d":"+5881580-07-11","s":"9999-12-31T23:59:59","ms":"1970-01-01T00:00:00.000Z","us":"1970-01-01T00:00:00.000000Z","ns":"1970-01-01T00:00:00.000000001Z"}',
      '{"d":"0000-01-01","s":"+010000-01-01T00:00:00","ms":"1970-01-01T00:00:00.000Z","us":"1970-01-01T00:00:00.000000Z","ns":"1969-12-31T23:59:59.999999999Z"}',
    ]);
  });

  it('isoTimestamp and isoDate agree with Date over its whole range', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        const expected = new Date(ms).toISOString();
        expect(isoTimestamp(BigInt(ms), 1, true)).toBe(expected);
        const day = Math.floor(ms / 86_400_000);
        expect(isoDate(day)).toBe(new Date(day * 86_400_000).toISOString().split('T')[0]);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a second column of the same name, and types it does not render', () => {
    const schema = new Schema([new Field('a', new Int8(), true), new Field('a', new Int8(), true)]);
    expect(() => planRows(schema)).toThrow(/second column of this name/);
    const half = new Schema([new Field('h', new Float16(), true)]);
    expect(() => planRows(half)).toThrow(/field "h": type Float16 \(float16\) is not read/);
  });
});
