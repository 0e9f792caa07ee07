import {
  makeData,
  RecordBatch,
  type Data,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  vectorFromArray,
} from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  column,
  decodeIpcStream,
  encodeIpcStream,
  type Row,
} from '../src/index.js';
import { big, every, rows } from './every-column.js';
import { readColumn } from './read-column.js';

const expected: Record<string, unknown[]> = {
  flag: [true, false, null, null],
  i32: [2 ** 31 - 1, -(2 ** 31), null, 0],
  i64: [2n ** 63n - 1n, -(2n ** 63n), null, 2n ** 53n + 1n],
  f64: [Number.NaN, -0, null, Infinity],
  text: ['', 'héllo wörld ✓ 😀', null, 'x'.repeat(200) + 'é'],
  blob: [
    '',
    Buffer.from(big).toString('hex'),
    null,
    Buffer.from('buffer is a Uint8Array').toString('hex'),
  ],
  us: [1_700_000_000_123_456n, BigInt(Date.UTC(2024, 1, 29, 12)) * 1000n, null, -5n],
  ns: [1_700_000_000_123_456_789n, -1_000_000n, null, 0n],
  day: [19_700, 19_782, null, -1],
  key: [1n, 2n ** 53n + 1n, -(2n ** 53n) - 3n, 0n],
};

function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected an ArrowBatchError');
}

describe('BatchBuilder', () => {
  const builder = new BatchBuilder(every);

  it('round-trips every column type through IPC, nulls included', () => {
    const batch = decodeIpcStream(encodeIpcStream(builder.fromRows(rows)), { expect: every });
    expect(batch.numRows).toBe(rows.length);
    for (const [name, values] of Object.entries(expected)) {
      expect(readColumn(batch, name), name).toEqual(values);
    }
    expect(batch.getChild('key')!.nullCount).toBe(0);
    expect(batch.getChild('text')!.nullCount).toBe(1);
  });

  it('builds the same batch from columns as from rows', () => {
    const columns = Object.fromEntries(
      every.fields.map((f) => [f.name, rows.map((r) => r[f.name])]),
    );
    const fromColumns = encodeIpcStream(builder.fromColumns(columns));
    expect(
      Buffer.from(fromColumns).equals(Buffer.from(encodeIpcStream(builder.fromRows(rows)))),
    ).toBe(true);
  });

  it('takes typed arrays of the storage type as columns, copied', () => {
    const schema = BatchSchema.define({
      fields: [
        { name: 'a', type: column.int64, nullable: false },
        { name: 't', type: column.timestamp('ns'), nullable: false },
        { name: 'n', type: column.int32, nullable: false },
        { name: 'f', type: column.float64, nullable: false },
      ],
    });
    const a = new BigInt64Array([2n ** 62n, -1n]);
    const batch = new BatchBuilder(schema).fromColumns({
      a,
      t: new BigInt64Array([1n, 2n]),
      n: new Int32Array([7, 8]),
      f: new Float64Array([0.5, 1.5]),
    });
    a[0] = 0n;
    expect(readColumn(batch, 'a')).toEqual([2n ** 62n, -1n]);
    expect(readColumn(batch, 'f')).toEqual([0.5, 1.5]);
  });

  it('keeps a string that starts with U+FEFF whole (the property below once drew one)', () => {
    const schema = BatchSchema.define({
      fields: [{ name: 's', type: column.utf8, nullable: true }],
    });
    const rows = [{ s: '\ufeff' }, { s: '\ufeffa' }, { s: null }, { s: 'a\ufeff' }];
    const batch = decodeIpcStream(encodeIpcStream(new BatchBuilder(schema).fromRows(rows)));
    expect(readColumn(batch, 's')).toEqual(rows.map((r) => r.s));
  });

  it('round-trips arbitrary int64, utf8 and binary values', () => {
    const schema = BatchSchema.define({
      fields: [
        { name: 'i', type: column.int64, nullable: true },
        { name: 's', type: column.utf8, nullable: true },
        { name: 'b', type: column.binary, nullable: false },
      ],
    });
    const b = new BatchBuilder(schema);
    const row = fc.record({
      i: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
      s: fc.option(fc.string({ unit: 'binary', maxLength: 80 })),
      b: fc.uint8Array({ maxLength: 100 }),
    });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 60 }), (input) => {
        const batch = decodeIpcStream(encodeIpcStream(b.fromRows(input)));
        expect(readColumn(batch, 'i')).toEqual(input.map((r) => r.i));
        expect(readColumn(batch, 's')).toEqual(input.map((r) => r.s));
        expect(readColumn(batch, 'b')).toEqual(input.map((r) => Buffer.from(r.b).toString('hex')));
      }),
      { numRuns: 150 },
    );
  });

  it("agrees value for value with apache-arrow's vectorFromArray, from rows and from columns", () => {
    // Timestamps are left out: apache-arrow's builder takes float milliseconds
    // (lossy beyond 2^53 ns); they are checked against exact values above.
    const schema = BatchSchema.define({
      fields: [
        { name: 'flag', type: column.boolean, nullable: true },
        { name: 'i32', type: column.int32, nullable: true },
        { name: 'i64', type: column.int64, nullable: true },
        { name: 'f64', type: column.float64, nullable: true },
        { name: 'text', type: column.utf8, nullable: true },
        { name: 'blob', type: column.binary, nullable: true },
        { name: 'day', type: column.date32, nullable: true },
      ],
    });
    const b = new BatchBuilder(schema);
    const row = fc.record({
      flag: fc.option(fc.boolean()),
      i32: fc.option(fc.integer()),
      i64: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
      f64: fc.option(fc.double()),
      text: fc.option(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }))),
      blob: fc.option(fc.uint8Array({ maxLength: 64 })),
      day: fc.option(fc.date({ noInvalidDate: true })),
    });
    const read = (stream: Uint8Array) => tableFromIPC(stream).batches[0]!;
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 80 }), (input) => {
        const fields = schema.arrow.fields;
        const slow = fields.map((f) =>
          vectorFromArray(
            input.map((r) => r[f.name as keyof typeof r]),
            f.type,
          ),
        );
        const struct = makeData({
          type: new Struct(fields),
          length: input.length,
          nullCount: 0,
          children: slow.map((v) => v.data[0] as Data),
        });
        const oracle = read(tableToIPC(new Table(new RecordBatch(schema.arrow, struct)), 'stream'));
        const fromRows = encodeIpcStream(b.fromRows(input));
        const columnsInput = Object.fromEntries(
          schema.fields.map((f) => [f.name, input.map((r) => r[f.name as keyof typeof r])]),
        );
        expect(Buffer.from(encodeIpcStream(b.fromColumns(columnsInput))).equals(fromRows)).toBe(
          true,
        );
        const ours = read(fromRows);
        for (const f of schema.fields) {
          expect(readColumn(ours, f.name), f.name).toEqual(readColumn(oracle, f.name));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('writes a lone surrogate as U+FFFD, as TextEncoder does', () => {
    const schema = BatchSchema.define({
      fields: [{ name: 's', type: column.utf8, nullable: false }],
    });
    const batch = new BatchBuilder(schema).fromRows([
      { s: 'a\ud800b' },
      { s: 'x'.repeat(60) + '\udc00' },
    ]);
    expect(readColumn(decodeIpcStream(encodeIpcStream(batch)), 's')).toEqual([
      'a\ufffdb',
      'x'.repeat(60) + '\ufffd',
    ]);
  });

  it('refuses a Date beyond the int64 nanosecond range instead of wrapping it', () => {
    const schema = BatchSchema.define({
      fields: [
        { name: 'ns', type: column.timestamp('ns'), nullable: false },
        { name: 'us', type: column.timestamp('us'), nullable: false },
      ],
    });
    const b = new BatchBuilder(schema);
    // int64 nanoseconds end at 2262-04-11T23:47:16.854775807Z.
    const last = new Date(9_223_372_036_854);
    const first = new Date(-9_223_372_036_854);
    const built = b.fromRows([
      { ns: last, us: last },
      { ns: first, us: first },
    ]);
    expect(readColumn(built, 'ns')).toEqual([
      9_223_372_036_854_000_000n,
      -9_223_372_036_854_000_000n,
    ]);
    for (const ms of [9_223_372_036_855, -9_223_372_036_855, Date.UTC(2300, 0, 1)]) {
      const row = { ns: new Date(ms), us: new Date(ms) };
      for (const run of [() => b.fromRows([row]), () => b.validateRow(row)]) {
        const error = refusal(run);
        expect([error.code, error.field, error.row]).toEqual(['TWG_ARROW_VALUE_INVALID', 'ns', 0]);
        expect(error.message).toMatch(/Date is outside the ns range/);
      }
    }
    // Microseconds hold every Date.
    const latest = new Date(8.64e15);
    expect(readColumn(b.fromRows([{ ns: 0n, us: latest }]), 'us')).toEqual([
      8_640_000_000_000_000_000n,
    ]);
  });

  it('refuses a missing or null non-nullable field, naming field and row', () => {
    const missing = refusal(() => builder.fromRows([{ key: 1n }, { i64: 5n }]));
    expect(missing.code).toBe('TWG_ARROW_VALUE_MISSING');
    expect([missing.field, missing.row]).toEqual(['key', 1]);
    expect(missing.message).toBe(
      'TWG_ARROW_VALUE_MISSING: field "key", row 1: missing in a non-nullable field',
    );
    expect(missing.errorClass).toBe('poison');
    const nulled = refusal(() => builder.fromRows([{ key: null }]));
    expect(nulled.message).toMatch(/row 0: null in a non-nullable field/);
  });

  it('refuses a value of the wrong type or range, naming field and row', () => {
    const cases: [Row, string, RegExp][] = [
      [{ key: 'one' }, 'key', /string "one" is not a bigint/],
      [{ key: 2n ** 63n }, 'key', /outside the int64 range/],
      [{ key: 2 ** 53 }, 'key', /not a bigint or a safe-integer/],
      [{ key: 1, i32: 1.5 }, 'i32', /not an integer/],
      [{ key: 1, i32: 2 ** 31 }, 'i32', /outside the int32 range/],
      [{ key: 1, f64: 1n }, 'f64', /bigint 1 is not a number/],
      [{ key: 1, text: 5 }, 'text', /not a string/],
      [{ key: 1, blob: 'bytes' }, 'blob', /not a Uint8Array/],
      [{ key: 1, flag: 1 }, 'flag', /not a boolean/],
      [{ key: 1, us: new Date(Number.NaN) }, 'us', /invalid Date/],
      [{ key: 1, day: 3.5 }, 'day', /not an integer/],
    ];
    for (const [bad, field, reason] of cases) {
      const error = refusal(() => builder.fromRows([{ key: 0 }, bad]));
      expect(error.code, field).toBe('TWG_ARROW_VALUE_INVALID');
      expect([error.field, error.row]).toEqual([field, 1]);
      expect(error.message).toMatch(reason);
    }
    expect(refusal(() => builder.fromRows([null as unknown as Row])).row).toBe(0);
  });

  it('validateRow accepts exactly the rows a build accepts', () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double(),
      fc.bigInt(),
      fc.string(),
      fc.uint8Array({ maxLength: 4 }),
      fc.date(),
    );
    const row = fc.dictionary(fc.constantFrom(...every.fields.map((f) => f.name)), value);
    fc.assert(
      fc.property(row, (r) => {
        const built = attempt(() => builder.fromRows([r]));
        const checked = attempt(() => builder.validateRow(r));
        expect(checked).toEqual(built);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses columns that do not fit the schema', () => {
    const schema = BatchSchema.define({
      fields: [
        { name: 'a', type: column.int32, nullable: true },
        { name: 'b', type: column.int32, nullable: true },
      ],
    });
    const b = new BatchBuilder(schema);
    expect(refusal(() => b.fromColumns({ a: [1], b: [1, 2] })).message).toMatch(
      /"b".*2 values.*1 rows/,
    );
    expect(refusal(() => b.fromColumns({ a: [1] })).field).toBe('b');
    expect(refusal(() => b.fromColumns({ a: [1], b: [1], c: [1] })).field).toBe('c');
  });
});

function attempt(run: () => unknown): string {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (!(error instanceof ArrowBatchError)) throw error;
    return `${error.code} ${String(error.field)} ${String(error.row)}`;
  }
}
