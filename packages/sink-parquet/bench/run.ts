// `pnpm --filter @thalweg/sink-parquet bench`: one JSON line.
//
// parquet-sink: BATCHES source batches of ROWS records (JSON values of about
// 130 bytes, a key each), written ROUNDS times by the Parquet sink (pack,
// zstd Parquet, CRC32C, write + fsync + rename + directory fsync, manifest
// line fsynced, confirmations) and by parquet-wasm alone on the same batches
// (the raw envelope built by @thalweg/sink-files, Arrow IPC, writeParquet
// with zstd, in memory), interleaved; the best round of each is compared.
// THALWEG_BENCH_ROWS, THALWEG_BENCH_BATCHES and THALWEG_BENCH_ROUNDS override the sizes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offsetSpan, rawAnchor, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { encodeRawBatch } from '@thalweg/sink-files';
import { RecordBatchStreamWriter } from 'apache-arrow';
import { Compression, Table, WriterPropertiesBuilder, writeParquet } from 'parquet-wasm';
import { openParquetSink } from '@thalweg/sink-parquet';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const ROWS = env('THALWEG_BENCH_ROWS', 200_000);
const BATCHES = env('THALWEG_BENCH_BATCHES', 4);
const ROUNDS = env('THALWEG_BENCH_ROUNDS', 5);
const CLUSTER = 'bench';

const encoder = new TextEncoder();
function sourceBatch(b: number): SourceBatch {
  const records = Array.from({ length: ROWS }, (_, i) => {
    const offset = b * ROWS + i;
    return {
      offset,
      key: encoder.encode(`user-${offset % 9973}`),
      value: encoder.encode(
        JSON.stringify({
          id: offset,
          event: 'page_view',
          path: `/p/${offset % 811}`,
          ms: (offset * 7) % 1000,
          ua: 'Mozilla/5.0 (X11; Linux x86_64)',
        }),
      ),
      timestamp: 1_760_000_000_000 + offset,
      headers: [] as [string, Uint8Array][],
    };
  });
  return { span: offsetSpan('bench', 0, b * ROWS, (b + 1) * ROWS), records };
}

const batches = Array.from({ length: BATCHES }, (_, b) => sourceBatch(b));
const payload = batches.reduce(
  (n, b) => n + b.records.reduce((m, r) => m + (r.key?.byteLength ?? 0) + r.value.byteLength, 0),
  0,
);
const records = BATCHES * ROWS;

/** parquet-wasm alone: the same batches as Arrow, to zstd Parquet in memory. */
function library(): number {
  const t = performance.now();
  let bytes = 0;
  for (const batch of batches) {
    const ipc = RecordBatchStreamWriter.writeAll([encodeRawBatch(CLUSTER, batch)]).toUint8Array(
      true,
    );
    const properties = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).build();
    bytes += writeParquet(Table.fromIPCStream(ipc), properties).byteLength;
  }
  if (bytes === 0) throw new Error('parquet-wasm wrote nothing');
  return (performance.now() - t) / 1000;
}

/** The sink: every batch submitted, then flushed (durable and confirmed). */
async function sink(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-parquet-bench-'));
  try {
    let confirmed = 0;
    const s = await openParquetSink({
      id: sinkId('raw'),
      dir,
      cluster: CLUSTER,
      confirm: {
        apply: async () => {
          confirmed++;
        },
      },
      log: () => undefined,
    });
    const t = performance.now();
    for (const batch of batches) await s.submit(batch, batch.span, rawAnchor(batch.span));
    await s.flush();
    const seconds = (performance.now() - t) / 1000;
    await s.close();
    if (confirmed !== BATCHES) throw new Error(`${confirmed} of ${BATCHES} batches confirmed`);
    return seconds;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const gc = (globalThis as { gc?: () => void }).gc;
library(); // warm the wasm module and the JIT
await sink();
let bestLibrary = Infinity;
let bestSink = Infinity;
for (let round = 0; round < ROUNDS; round++) {
  gc?.();
  bestLibrary = Math.min(bestLibrary, library());
  gc?.();
  bestSink = Math.min(bestSink, await sink());
}
const round = (n: number, digits: number) => Number(n.toFixed(digits));
process.stdout.write(
  JSON.stringify({
    bench: 'parquet-sink',
    records_per_s: Math.round(records / bestSink),
    mb_per_s: round(payload / 2 ** 20 / bestSink, 1),
    baseline: 'parquet-wasm writing the same batches directly',
    baseline_records_per_s: Math.round(records / bestLibrary),
    baseline_mb_per_s: round(payload / 2 ** 20 / bestLibrary, 1),
    ratio: round(bestLibrary / bestSink, 2),
    records,
    rounds: ROUNDS,
  }) + '\n',
);
