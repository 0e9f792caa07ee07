// The recovery process of the lakehouse integration test: given only the
// names of the Iceberg table, the S3 coverage and the PostgreSQL schema (no
// path of the ingest process), it recovers the Postgres secondary from raw
// read back through Iceberg, until caught up, and prints one JSON line: its
// recovery statistics and backlog. With `deletionVectors` the catalog
// describes the table with deletion vectors on: the raw role is refused.
//
//   node dist/lakehouse-child.js '<LakehouseNames JSON>' [deletionVectors]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeTransportFactory } from '@thalweg/sink-zerobus';
import { postgresUrl } from '@thalweg/test-services';
import pg from 'pg';
import { lakehouseCatalog, openLakehouse, type LakehouseNames } from './lakehouse-topology.js';

const names = JSON.parse(process.argv[2] ?? '{}') as LakehouseNames;
const deletionVectors = process.argv[3] === 'deletionVectors';
const pool = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
pool.on('error', () => undefined);
// The source is declared but never read in the recovery role: an empty directory of its own.
const sourceDir = await mkdtemp(join(tmpdir(), 'twg-lake-recovery-'));
try {
  const catalog = await lakehouseCatalog(
    names,
    deletionVectors ? { 'delta.enableDeletionVectors': 'true' } : {},
  );
  const job = await openLakehouse({
    names,
    role: 'recovery',
    sourceDir,
    zerobus: new FakeTransportFactory({ ackLatencyMs: 1 }),
    catalog,
    pool,
    withSecondary: true,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const stats = await job.run({ untilCaughtUp: true });
  process.stdout.write(`${JSON.stringify({ recovery: stats.recovery })}\n`);
} catch (error) {
  process.stdout.write(
    `${JSON.stringify({ refused: error instanceof Error ? error.message : String(error) })}\n`,
  );
  process.exitCode = 3;
} finally {
  await pool.end();
  await rm(sourceDir, { recursive: true, force: true });
}
