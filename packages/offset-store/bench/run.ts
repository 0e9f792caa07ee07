// `pnpm --filter @thalweg/offset-store bench`: one JSON object per line.
// Postgres and S3 lines need THALWEG_PG_URL / THALWEG_S3_* (pnpm services:up).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offsetSpan, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage, type CoverageStore, type DurableReceipt } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { S3Coverage } from '@thalweg/offset-store/s3';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

const sink = sinkId('bench');
const key = { sink, topic: 'orders', partition: 0 };

function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function receipts(from: number, count: number, stride: number): DurableReceipt[] {
  return Array.from({ length: count }, (_, i) => ({
    sink,
    span: offsetSpan('orders', 0, from + i * stride, from + i * stride + 10),
    durability: 'flush-close' as const,
    records: 10,
    bytes: 0,
    submittedAt: 0,
    confirmedAt: 0,
  }));
}

/**
 * Records `calls` batches of `batch` ranges. `append`: each range touches the
 * previous one (steady ingest, everything merges). `scattered`: every range
 * leaves a gap (a failing sink), so every range is a new entry.
 */
async function record(
  backend: string,
  store: CoverageStore,
  calls: number,
  batch: number,
): Promise<void> {
  for (const pattern of ['append', 'scattered'] as const) {
    const stride = pattern === 'append' ? 10 : 20;
    const base = pattern === 'append' ? 0 : 1e12;
    const started = performance.now();
    for (let c = 0; c < calls; c++)
      await store.recordDurable(receipts(base + c * batch * stride, batch, stride));
    const ms = performance.now() - started;
    emit({
      bench: 'record',
      backend,
      pattern,
      batch,
      ranges: calls * batch,
      ms: Math.round(ms),
      ranges_per_s: Math.round((calls * batch * 1000) / ms),
    });
  }
}

async function gaps(backend: string, store: CoverageStore): Promise<void> {
  // 10,001 disjoint ranges -> 10,000 inner gaps below the bound.
  await store.recordDurable(
    Array.from({ length: 10_001 }, (_, i) => ({
      ...receipts(0, 1, 1)[0]!,
      span: offsetSpan('gaps', 0, i * 20, i * 20 + 10),
    })),
  );
  const gapKey = { ...key, topic: 'gaps' };
  await store.gaps(gapKey, 10, 10_000 * 20);
  const runs = 20;
  const started = performance.now();
  let found = 0;
  for (let i = 0; i < runs; i++) found = (await store.gaps(gapKey, 10, 10_000 * 20)).length;
  emit({
    bench: 'gaps',
    backend,
    gaps: found,
    ms: Number(((performance.now() - started) / runs).toFixed(3)),
  });
}

const memory = new InMemoryCoverage({ sinks: [sink] });
await record('memory', memory, 200, 1000);
await gaps('memory', memory);
await memory.close();

const dir = await mkdtemp(join(tmpdir(), 'twg-bench-'));
const level = await LevelDbCoverage.open({ location: dir, sinks: [sink] });
await record('leveldb', level, 200, 1000);
await gaps('leveldb', level);
await level.close();
await rm(dir, { recursive: true, force: true });

const pgUrl = process.env['THALWEG_PG_URL'];
if (pgUrl === undefined)
  emit({ bench: 'record', backend: 'postgres', skipped: 'THALWEG_PG_URL is not set' });
else {
  const schema = `twg_bench_${Date.now().toString(36)}`;
  const store = await PostgresCoverage.open({ pool: pgUrl, schema, sinks: [sink] });
  await record('postgres', store, 50, 1000);
  await gaps('postgres', store);
  await store.close();
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`drop schema "${schema}" cascade`);
  await client.end();
}

const s3Endpoint = process.env['THALWEG_S3_ENDPOINT'];
if (s3Endpoint === undefined)
  emit({ bench: 'record', backend: 's3', skipped: 'THALWEG_S3_ENDPOINT is not set' });
else {
  const client = new S3Client({
    endpoint: s3Endpoint,
    region: process.env['THALWEG_S3_REGION'] ?? 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: process.env['THALWEG_S3_ACCESS_KEY'] ?? '',
      secretAccessKey: process.env['THALWEG_S3_SECRET_KEY'] ?? '',
    },
  });
  const bucket = `twg-bench-${Date.now().toString(36)}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const store = new S3Coverage({ s3: client, bucket, sinks: [sink] });
  await record('s3', store, 20, 1000);
  await gaps('s3', store);
  await store.close();
  client.destroy();
}
