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
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchColumns, benchRows } from './bench-data.js';
import { emit, medianMs, round } from './measure.js';

// Build + encode of 1M rows x 5 columns: the schema-driven builder (value
// offsets straight into buffers) against apache-arrow's generic path,
// vectorFromArray per column + tableToIPC, on the same values in the same
// run, and a plain copy of the encoded bytes as the memory-copy limit. The baseline gets the timestamps as epoch milliseconds, the form its
// timestamp builder takes (it multiplies them up itself).
//
// Each part runs in a process of its own, started from this file with
// `--part <name>`. In one process, a part measured after apache-arrow's path
// paid for the garbage and the grown heap that path left behind: from rows,
// 7.4-7.9x measured last against 10.3-11.3x measured before the baseline.
const ROWS = 1_000_000;
const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: true },
    { name: 'score', type: column.float64, nullable: false },
    { name: 'ts', type: column.timestamp('us'), nullable: false },
    { name: 'payload', type: column.binary, nullable: false },
  ],
});

/** What one part measured: its median time, and the bytes it encoded or copied. */
interface PartResult {
  readonly ms: number;
  readonly bytes: number;
  readonly uncheckedMs?: number;
}

type PartName = 'columns' | 'rows' | 'baseline' | 'memcpy' | 'fresh-copy' | 'decode';

/** One part, measured in this process (the child's side). */
function measurePart(name: PartName, bytes: number): PartResult {
  const data = benchColumns(ROWS);
  const builder = new BatchBuilder(schema);
  let encoded = 0;
  switch (name) {
    case 'columns': {
      const columns = { ...data };
      const ms = medianMs(() => (encoded = builder.encodeColumns(columns).byteLength), 5);
      return { ms, bytes: encoded };
    }
    case 'rows': {
      const rows = benchRows(data);
      const ms = medianMs(() => (encoded = builder.encodeRows(rows).byteLength), 5);
      return { ms, bytes: encoded };
    }
    case 'baseline': {
      const millis = data.ts.map((t) => Number(t / 1000n));
      const ms = medianMs(() => {
        const table = new Table({
          id: vectorFromArray(data.id, new Int64()),
          name: vectorFromArray(data.name, new Utf8()),
          score: vectorFromArray(data.score, new Float64()),
          ts: vectorFromArray(millis, new TimestampMicrosecond('UTC')),
          payload: vectorFromArray(data.payload, new Binary()),
        });
        encoded = tableToIPC(table, 'stream').byteLength;
      }, 3);
      return { ms, bytes: encoded };
    }
    case 'memcpy': {
      // The memory-copy limit: copying as many bytes as the encoded batch
      // holds (what building could approach if it only moved bytes).
      const from = Buffer.alloc(bytes, 1);
      const to = Buffer.alloc(bytes);
      return { ms: medianMs(() => from.copy(to), 9), bytes };
    }
    case 'fresh-copy': {
      // The same copy into memory the process has not touched yet, as every
      // batch built gets: on this VM the first touch of each page costs
      // about as much as copying it several times (page faults).
      const from = Buffer.alloc(bytes, 1);
      return { ms: medianMs(() => from.copy(Buffer.allocUnsafeSlow(bytes)), 9), bytes };
    }
    case 'decode': {
      // Decoding one message with every check (framing, metadata bounds,
      // buffer lengths, value offsets, UTF-8) against apache-arrow's
      // tableFromIPC, which checks nothing and reads values lazily: the
      // difference is the price of refusing a corrupted message instead of
      // returning wrong values.
      const message = encodeIpcStream(builder.fromColumns({ ...data }));
      const ms = medianMs(() => decodeIpcStream(message, { expect: schema }), 5);
      const uncheckedMs = medianMs(() => tableFromIPC(message), 5);
      return { ms, bytes: message.byteLength, uncheckedMs };
    }
  }
}

/** One part, in a process of its own (the parent's side). */
function inChild(name: PartName, bytes = 0): PartResult {
  const child = spawnSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--part', name, String(bytes)],
    { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(`the ${name} part ended with ${String(child.status)}`);
  return JSON.parse(child.stdout) as PartResult;
}

if (process.argv[2] === '--part') {
  const name = process.argv[3] as PartName;
  process.stdout.write(JSON.stringify(measurePart(name, Number(process.argv[4] ?? 0))));
} else {
  const columns = inChild('columns');
  const rows = inChild('rows');
  const baseline = inChild('baseline');
  const memcpy = inChild('memcpy', columns.bytes).ms;
  const freshCopy = inChild('fresh-copy', columns.bytes).ms;
  const line = (ours: number) => ({
    bench: 'build+encode',
    rows: ROWS,
    cols: 5,
    ms: round(ours),
    memcpy_ms: round(memcpy),
    over_memcpy: Number((ours / memcpy).toFixed(1)),
    fresh_copy_ms: round(freshCopy),
    baseline_ms: round(baseline.ms),
    speedup: Number((baseline.ms / ours).toFixed(2)),
  });
  emit({
    ...line(columns.ms),
    input: 'columns',
    ipc_bytes: columns.bytes,
    baseline_ipc_bytes: baseline.bytes,
  });
  emit({ ...line(rows.ms), input: 'row-objects', target_speedup: 10 });
  const decode = inChild('decode');
  emit({
    bench: 'decode-checked',
    rows: ROWS,
    cols: 5,
    bytes: decode.bytes,
    ms: round(decode.ms),
    mb_per_s: Math.round(decode.bytes / 1e3 / decode.ms),
    unchecked_ms: round(decode.uncheckedMs ?? Number.NaN),
  });
}
