// `pnpm --filter @thalweg/iceberg bench`: one JSON line.
//
// iceberg-recovery-read: pyiceberg writes a raw-like table (partition int,
// offset long, value string) of TOTAL rows in FILES appends (one zstd
// Parquet file and one snapshot each; four partitions in runs of 1,000
// rows, offsets rising), through the test REST catalog and S3. Then one
// window (partition 1, the middle 60% of the offsets) is read ROUNDS times
// by our scanWindow (catalog load, manifests, pruning, S3 reads, Parquet
// decode, row selection in offset order) and ROUNDS times by pyiceberg's
// `table.scan(row_filter=...).to_arrow()` (timed inside Python, so its
// start-up is not counted), in the same run; the best round of each is
// compared. Needs the services env (THALWEG_ICEBERG_*, THALWEG_S3_*).
// THALWEG_BENCH_ROWS, THALWEG_BENCH_FILES and THALWEG_BENCH_ROUNDS override the sizes.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { icebergScript, uniqueIdentifier } from '@thalweg/test-services';
import { ManifestCache, RestCatalog, scanWindow, type IcebergSource } from '@thalweg/iceberg';
import { s3FileStore } from '@thalweg/iceberg/s3';
import { RAW_SCHEMA, peer, testStores, writeTable } from '../test/support/iceberg-peers.js';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const TOTAL = env('THALWEG_BENCH_ROWS', 500_000);
const FILES = env('THALWEG_BENCH_FILES', 10);
const ROUNDS = env('THALWEG_BENCH_ROUNDS', 3);
const NAMESPACE = 'thalweg_bench';
const PARTITION = 1;
const START = Math.floor(TOTAL * 0.2);
const END = Math.floor(TOTAL * 0.8);

const table = uniqueIdentifier('recovery_read');
const perFile = Math.ceil(TOTAL / FILES);
for (let f = 0; f < FILES; f++) {
  const first = f * perFile;
  await writeTable({
    namespace: NAMESPACE,
    table,
    schema: RAW_SCHEMA,
    generate: {
      count: Math.min(perFile, TOTAL - first),
      columns: {
        // partition runs of 1,000 rows, as a raw writer batches one partition's span at a time
        partition: { from: first / 1000, every: 1000, modulo: 4 },
        offset: { from: first },
        value: { template: 'record-{i}-abcdefghijklmnopqrstuvwxyz0123456789' },
      },
    },
  });
}

// one catalog client and S3 client for every round, as pyiceberg keeps its catalog;
// pyiceberg also keeps each manifest list it read (an LRU cache), not the manifests.
// The headline is without our ManifestCache; a second figure is with it.
const stores = testStores();
const plain = {
  catalog: new RestCatalog({ uri: stores.catalogUri }),
  files: s3FileStore(stores.s3),
};
const cached = { ...plain, manifests: new ManifestCache() };
async function ours(source: IcebergSource): Promise<{ records: number; seconds: number }> {
  const began = performance.now();
  const scan = await scanWindow(source, {
    namespace: NAMESPACE,
    table,
    columns: { partition: 'partition', offset: 'offset' },
    partition: PARTITION,
    start: START,
    end: END,
  });
  let records = 0;
  for await (const batch of scan.batches()) records += batch.numRows;
  return { records, seconds: (performance.now() - began) / 1000 };
}

const scripts = dirname(icebergScript('read_table.py'));
const baselineScript = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../bench/pyiceberg_scan.py',
);
let records = 0;
async function bestOf(source: IcebergSource): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const one = await ours(source);
    records = one.records;
    best = Math.min(best, one.seconds);
  }
  return best;
}
const best = await bestOf(plain);
const bestCached = await bestOf(cached);
const baseline = JSON.parse(
  await peer([
    baselineScript,
    scripts,
    `${NAMESPACE}.${table}`,
    String(PARTITION),
    String(START),
    String(END),
    String(ROUNDS),
  ]),
) as { records: number; seconds: number };
if (baseline.records !== records) {
  throw new Error(`pyiceberg read ${baseline.records} records of the window, we read ${records}`);
}
const perSecond = (n: number, s: number): number => Math.round(n / s);
console.log(
  JSON.stringify({
    bench: 'iceberg-recovery-read',
    records,
    records_per_s: perSecond(records, best),
    baseline: 'pyiceberg scan of the same window',
    baseline_records_per_s: perSecond(baseline.records, baseline.seconds),
    ratio: Math.round((baseline.seconds / best) * 100) / 100,
    with_manifest_cache_records_per_s: perSecond(records, bestCached),
    table_rows: TOTAL,
    data_files: FILES,
    rounds: ROUNDS,
  }),
);
