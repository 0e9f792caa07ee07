// `pnpm --filter @thalweg/source-ipc-stream bench`: one JSON object per line.
// Needs no service: a node TCP server serves one pre-encoded Arrow IPC stream.
//
// ipc-stream-source: ROWS rows (id int64, payload utf8 of PAYLOAD_BYTES) in
// batches of BATCH_ROWS, read ROUNDS times each by apache-arrow's
// RecordBatchReader and by IpcStreamSource.batches(), interleaved; best of
// each compared. THALWEG_BENCH_ROWS, _PAYLOAD_BYTES, _BATCH_ROWS and
// _ROUNDS override the sizes.
import { readRatio } from './read-ratio.js';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

await readRatio(
  env('THALWEG_BENCH_ROWS', 500_000),
  env('THALWEG_BENCH_BATCH_ROWS', 1000),
  env('THALWEG_BENCH_PAYLOAD_BYTES', 200),
  env('THALWEG_BENCH_ROUNDS', 5),
);
