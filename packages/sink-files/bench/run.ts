// `pnpm --filter @thalweg/sink-files bench`: one JSON object per line.
// The raw segment sink on the local disk, the same batches two ways in one
// run: pipelined (submit returns on acceptance, the writer group-commits
// whatever queued during the previous fsync) against the serial baseline
// (flush after every submit: one segment, two fsyncs, per batch). The
// source yields to the event loop between batches in both, as a network
// source does, so the writer runs while batches arrive.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NO_CONFIRM,
  offsetSpan,
  sinkId,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { RawSegmentSink } from '@thalweg/sink-files';

const RECORDS = 100_000;
const RECORD_BYTES = 256;
const BATCH_RECORDS = 100;
const PARTITIONS = 4;

function batches(): SourceBatch[] {
  const out: SourceBatch[] = [];
  const next = Array.from({ length: PARTITIONS }, () => 0);
  for (let b = 0; b < RECORDS / BATCH_RECORDS; b++) {
    const partition = b % PARTITIONS;
    const start = next[partition] ?? 0;
    const records: SourceRecord[] = Array.from({ length: BATCH_RECORDS }, (_, i) => ({
      offset: start + i,
      key: Buffer.from(`key-${(start + i) % 1000}`),
      value: Buffer.alloc(RECORD_BYTES, (start + i) % 251),
      timestamp: 1_700_000_000_000 + start + i,
      headers: { source: Buffer.from('bench') },
    }));
    out.push({ span: offsetSpan('bench', partition, start, start + BATCH_RECORDS), records });
    next[partition] = start + BATCH_RECORDS;
  }
  return out;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

async function run(data: readonly SourceBatch[], serial: boolean) {
  const dir = await mkdtemp(join(tmpdir(), 'twg-sink-files-bench-'));
  try {
    const sink = await RawSegmentSink.open({
      id: sinkId('bench'),
      dir,
      cluster: 'bench',
      confirm: { apply: async () => undefined },
      log: () => undefined,
    });
    const started = performance.now();
    for (const batch of data) {
      await sink.submit(batch, batch.span, NO_CONFIRM);
      if (serial) await sink.flush();
      else await yieldToLoop();
    }
    await sink.close();
    const seconds = (performance.now() - started) / 1000;
    const stats = sink.stats();
    return {
      records_per_s: Math.round(RECORDS / seconds),
      mb_per_s: Number(((RECORDS * RECORD_BYTES) / 1e6 / seconds).toFixed(1)),
      segments: stats.segmentsWritten,
      coalesce: Number(stats.coalesce.toFixed(1)),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const data = batches();
const common = {
  bench: 'raw-segments',
  records: RECORDS,
  record_bytes: RECORD_BYTES,
  batch_records: BATCH_RECORDS,
  partitions: PARTITIONS,
};
await run(data.slice(0, 50), false); // warm-up: JIT, file system caches
const serial = await run(data, true);
emit({ ...common, mode: 'serial-flush', ...serial });
const piped = await run(data, false);
emit({
  ...common,
  mode: 'pipelined',
  ...piped,
  baseline_records_per_s: serial.records_per_s,
  ratio: Number((piped.records_per_s / serial.records_per_s).toFixed(2)),
});
