import {
  Binary,
  Float64,
  Int64,
  Table,
  tableFromIPC,
  tableToIPC,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import {
  BatchBuilder,
  BatchSchema,
  column,
  decodeIpcStream,
  encodeIpcStream,
} from '@thalweg/stream-arrow';
import { benchColumns, benchRows } from './bench-data.js';
import { emit, medianMs, round } from './measure.js';

// Build + encode of 1M rows x 5 columns: the schema-driven builder (value
// offsets straight into buffers) against apache-arrow's generic path,
// vectorFromArray per column + tableToIPC, on the same values in the same
// run, and a plain copy of the encoded bytes as the memory-copy limit. The baseline gets the timestamps as epoch milliseconds, the form its
// timestamp builder takes (it multiplies them up itself).
const ROWS = 1_000_000;
const data = benchColumns(ROWS);
const millis = data.ts.map((t) => Number(t / 1000n));
const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: true },
    { name: 'score', type: column.float64, nullable: false },
    { name: 'ts', type: column.timestamp('us'), nullable: false },
    { name: 'payload', type: column.binary, nullable: false },
  ],
});
const builder = new BatchBuilder(schema);
const columns = { ...data };

let ourBytes = 0;
const ours = medianMs(() => {
  ourBytes = builder.encodeColumns(columns).byteLength;
}, 5);

let baseBytes = 0;
const baseline = medianMs(() => {
  const table = new Table({
    id: vectorFromArray(data.id, new Int64()),
    name: vectorFromArray(data.name, new Utf8()),
    score: vectorFromArray(data.score, new Float64()),
    ts: vectorFromArray(millis, new TimestampMicrosecond('UTC')),
    payload: vectorFromArray(data.payload, new Binary()),
  });
  baseBytes = tableToIPC(table, 'stream').byteLength;
}, 3);

// The memory-copy limit: copying as many bytes as the encoded batch holds,
// in the same run (what building could approach if it only moved bytes).
const copyFrom = Buffer.alloc(ourBytes, 1);
const copyTo = Buffer.alloc(ourBytes);
const memcpy = medianMs(() => copyFrom.copy(copyTo), 9);
// The same copy into memory the process has not touched yet, as every batch
// built gets: on this VM the first touch of each page costs about as much as
// copying it several times (page faults), and a build that allocates its
// columns and then the message pays it twice.
const freshCopy = medianMs(() => copyFrom.copy(Buffer.allocUnsafeSlow(ourBytes)), 9);

emit({
  bench: 'build+encode',
  rows: ROWS,
  cols: 5,
  ms: round(ours),
  memcpy_ms: round(memcpy),
  over_memcpy: Number((ours / memcpy).toFixed(1)),
  fresh_copy_ms: round(freshCopy),
  baseline_ms: round(baseline),
  speedup: Number((baseline / ours).toFixed(2)),
  input: 'columns',
  ipc_bytes: ourBytes,
  baseline_ipc_bytes: baseBytes,
});

const rows = benchRows(data);
const fromRows = medianMs(() => builder.encodeRows(rows), 5);
emit({
  bench: 'build+encode',
  rows: ROWS,
  cols: 5,
  ms: round(fromRows),
  memcpy_ms: round(memcpy),
  over_memcpy: Number((fromRows / memcpy).toFixed(1)),
  fresh_copy_ms: round(freshCopy),
  baseline_ms: round(baseline),
  speedup: Number((baseline / fromRows).toFixed(2)),
  input: 'row-objects',
  target_speedup: 10,
});

// Decoding one message with every check (framing, metadata bounds, buffer
// lengths, value offsets, UTF-8) against apache-arrow's tableFromIPC, which
// checks nothing and reads values lazily: the difference is the price of
// refusing a corrupted message instead of returning wrong values.
const message = encodeIpcStream(builder.fromColumns(columns));
const decode = medianMs(() => decodeIpcStream(message, { expect: schema }), 5);
const unchecked = medianMs(() => tableFromIPC(message), 5);
emit({
  bench: 'decode-checked',
  rows: ROWS,
  cols: 5,
  bytes: message.byteLength,
  ms: round(decode),
  mb_per_s: Math.round(message.byteLength / 1e3 / decode),
  unchecked_ms: round(unchecked),
});
