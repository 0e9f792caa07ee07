import { BatchSchema, column, type Row } from '../src/index.js';

/** A schema with a column of every type the builder takes, all nullable but `key`. */
export const every = BatchSchema.define({
  fields: [
    { name: 'flag', type: column.boolean, nullable: true },
    { name: 'i32', type: column.int32, nullable: true },
    { name: 'i64', type: column.int64, nullable: true },
    { name: 'f64', type: column.float64, nullable: true },
    { name: 'text', type: column.utf8, nullable: true },
    { name: 'blob', type: column.binary, nullable: true },
    { name: 'us', type: column.timestamp('us'), nullable: true },
    { name: 'ns', type: column.timestamp('ns'), nullable: true },
    { name: 'day', type: column.date32, nullable: true },
    { name: 'key', type: column.int64, nullable: false },
  ],
});

/** A binary value of 3 MiB. */
export const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) & 0xff);
/** Four rows: each type's extremes, non-ASCII text, a long string, nulls and absent fields. */
export const rows: Row[] = [
  {
    flag: true,
    i32: 2 ** 31 - 1,
    i64: 2n ** 63n - 1n,
    f64: Number.NaN,
    text: '',
    blob: new Uint8Array(0),
    us: 1_700_000_000_123_456n,
    ns: 1_700_000_000_123_456_789n,
    day: 19_700,
    key: 1,
  },
  {
    flag: false,
    i32: -(2 ** 31),
    i64: -(2n ** 63n),
    f64: -0,
    text: 'héllo wörld ✓ 😀',
    blob: big,
    us: new Date(Date.UTC(2024, 1, 29, 12)),
    ns: new Date(-1),
    day: new Date(Date.UTC(2024, 1, 29, 23, 59)),
    key: 2n ** 53n + 1n,
  },
  { key: -(2n ** 53n) - 3n },
  {
    flag: null,
    i32: 0,
    i64: 2n ** 53n + 1n,
    f64: Infinity,
    text: 'x'.repeat(200) + 'é',
    blob: Buffer.from('buffer is a Uint8Array'),
    us: -5n,
    ns: 0,
    day: -1,
    key: 0n,
  },
];
