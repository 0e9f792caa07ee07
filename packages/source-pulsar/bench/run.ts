// `pnpm --filter @thalweg/source-pulsar bench`: one JSON object per line.
// Needs a Pulsar with its WebSocket API: THALWEG_PULSAR_WS_URL and
// THALWEG_PULSAR_ADMIN_URL (eval "$(pnpm services:up)").
//
// pulsar-read-ratio: READ_RECORDS payloads of VALUE_BYTES in a fresh
// 4-partition topic, read ROUNDS times each by the bare WebSocket loop and
// by PulsarSubscriptionSource, interleaved; best of each compared.
// pulsar-e2e: E2E_RECORDS of VALUE_BYTES (a backlog above the 128 MiB byte
// budget), Pulsar -> pipeline -> durable raw segments against the bare loop
// on the same topic in the same run, ROUNDS times each; RSS sampled.
// THALWEG_BENCH_READ_RECORDS and THALWEG_BENCH_E2E_RECORDS override the sizes.
import { pulsar } from '@thalweg/test-services';
import { e2e } from './e2e.js';
import { readRatio } from './read-ratio.js';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const READ_RECORDS = env('THALWEG_BENCH_READ_RECORDS', 50_000);
const READ_VALUE_BYTES = 256;
const E2E_RECORDS = env('THALWEG_BENCH_E2E_RECORDS', 18_000);
const E2E_VALUE_BYTES = env('THALWEG_BENCH_E2E_VALUE_BYTES', 8 * 1024);
const PARTITIONS = 4;
const ROUNDS = env('THALWEG_BENCH_ROUNDS', 2);

let endpoint: { wsUrl: string; adminUrl: string };
try {
  const { wsUrl, adminUrl } = pulsar();
  endpoint = { wsUrl, adminUrl };
} catch (error) {
  process.stderr.write(
    `source-pulsar bench: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}

if (READ_RECORDS > 0) await readRatio(endpoint, READ_RECORDS, READ_VALUE_BYTES, PARTITIONS, ROUNDS);
if (E2E_RECORDS > 0) await e2e(endpoint, E2E_RECORDS, E2E_VALUE_BYTES, PARTITIONS, ROUNDS);
