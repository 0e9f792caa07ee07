import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { sinkId } from '@thalweg/connector-core';
import { S3Coverage } from '@thalweg/offset-store/s3';
import { FakeTransportFactory, type FakeCatalog } from '@thalweg/sink-zerobus';
import {
  iceberg,
  postgresUrl,
  s3Endpoint,
  uniqueIdentifier,
  uniqueName,
} from '@thalweg/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  LAKE_CLUSTER,
  LAKE_PG,
  LAKE_TOPIC,
  lakehouseCatalog,
  openLakehouse,
  type LakehouseNames,
} from '../../src/lakehouse-topology.js';
import { IcebergMirror } from './iceberg-mirror.js';

const CHILD_JS = join(import.meta.dirname, '..', '..', 'dist', 'lakehouse-child.js');
const RECORDS_PER_FILE = 300;
const BATCH = 50;

const s3 = s3Endpoint();
const s3Config = {
  endpoint: s3.endpoint,
  region: s3.region,
  forcePathStyle: true,
  credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
};
const bucket = uniqueName('twg-lake');
const pool = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
const dirs: string[] = [];
const quiet = (): void => undefined;

beforeAll(async () => {
  await new S3Client(s3Config).send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(async () => {
  await pool.end();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `twg-lake-${name}-`));
  dirs.push(dir);
  return dir;
}

function freshNames(): LakehouseNames {
  return {
    icebergUrl: iceberg().url,
    namespace: 'thalweg_lake',
    table: uniqueIdentifier('raw'),
    bucket,
    prefix: `${uniqueName('lake')}/`,
    pgSchema: uniqueIdentifier('twg_lake'),
  };
}

/** NDJSON file `name` holding records n = from .. from + count - 1. */
async function writeRecords(dir: string, name: string, from: number, count: number) {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ n: from + i }));
  await writeFile(join(dir, name), `${lines.join('\n')}\n`);
}

/** Runs the recovery child: its JSON line and exit code. */
async function recoverInChild(names: LakehouseNames, ...flags: string[]) {
  const child = spawn(process.execPath, [CHILD_JS, JSON.stringify(names), ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  let line = '';
  for await (const l of createInterface({ input: child.stdout })) line = l;
  const code = await exited;
  if (line === '')
    throw new Error(`the recovery child printed nothing (exit ${code}): ${stderr.join('')}`);
  return { code, out: JSON.parse(line) as Record<string, unknown>, stderr: stderr.join('') };
}

/** The secondary's rows: how many, how many distinct records, and the set of n. */
async function audit(schema: string) {
  const { rows } = await pool.query<{ total: string; distinct: string; max: string | null }>(
    `select count(*) as total, count(distinct n) as distinct, max(n) as max from "${schema}".orders`,
  );
  const r = rows[0];
  return { total: Number(r?.total), distinct: Number(r?.distinct), max: Number(r?.max ?? -1) };
}

/** What the coverage on S3 records for `sink` of the one partition. */
async function covered(names: LakehouseNames, sink: string) {
  const store = new S3Coverage({
    s3: s3Config,
    bucket,
    prefix: names.prefix,
    sinks: [sinkId(sink)],
  });
  try {
    return (await store.covered({ sink: sinkId(sink), topic: LAKE_TOPIC, partition: 0 })).ranges();
  } finally {
    await store.close();
  }
}

describe('Zerobus as primary raw, recovered through Iceberg in another process', () => {
  it('a secondary down for half the ingest is recovered from the Iceberg raw by a process with no access to the ingest disk: each record once, no window completed before its rows showed', async () => {
    const names = freshNames();
    const sourceDir = await tempDir('source');
    const serverDir = await tempDir('zerobus');
    const mirror = new IcebergMirror(serverDir, names);
    const catalog = await lakehouseCatalog(names);
    const ingest = (withSecondary: boolean) => {
      const zerobus = new FakeTransportFactory({
        ackLatencyMs: 1,
        server: { persistDir: serverDir },
      });
      // The server's log file is the test's to close: the sink closes its streams only.
      onTestFinished(() => zerobus.server.close());
      return openLakehouse({
        names,
        role: 'ingest',
        sourceDir,
        zerobus,
        catalog,
        pool,
        withSecondary,
        config: { maxBatchRecords: BATCH },
        log: quiet,
      });
    };

    // 1. The first file, with the secondary up.
    await writeRecords(sourceDir, '0001.ndjson', 0, RECORDS_PER_FILE);
    await (await ingest(true)).run();
    expect(await audit(names.pgSchema)).toEqual({ total: 300, distinct: 300, max: 299 });

    // 2. The second file with the secondary down. Raw's coverage records
    // [0, 300) that Iceberg does not show yet: the open waits (the hole guard,
    // visibleWithinMs) until the metadata commit shows it.
    await writeRecords(sourceDir, '0002.ndjson', RECORDS_PER_FILE, RECORDS_PER_FILE);
    let committing = false;
    let openedAfterCommitBegan: boolean | null = null;
    const opening = ingest(false).then((job) => {
      openedAfterCommitBegan = committing;
      return job;
    });
    const firstFile = RECORDS_PER_FILE / BATCH;
    committing = true;
    await mirror.commit(firstFile);
    const second = await opening;
    // nothing of raw showed before the commit began, so the open cannot have passed the guard earlier
    expect(openedAfterCommitBegan).toBe(true);
    await second.run();
    expect((await mirror.acknowledged()).length).toBe(2 * firstFile);
    expect(await covered(names, 'raw')).toEqual([{ start: 0, end: 600 }]);

    // 3. Iceberg shows three more batches whole and the first 20 rows of the
    // fourth: recovery replays what shows whole, and no further.
    await mirror.commit(firstFile + 3, 20);
    const partial = await recoverInChild(names);
    expect(partial.code).toBe(0);
    expect(await audit(names.pgSchema)).toEqual({ total: 450, distinct: 450, max: 449 });
    expect(await covered(names, LAKE_PG)).toEqual([{ start: 0, end: 450 }]);
    expect(partial.out).toMatchObject({ recovery: { backlog: { rawUnreadRecords: 150 } } });

    // 4. The rest shows: a second recovery process completes the secondary.
    await mirror.commit(2 * firstFile);
    const rest = await recoverInChild(names);
    expect(rest.code).toBe(0);
    expect(await audit(names.pgSchema)).toEqual({ total: 600, distinct: 600, max: 599 });
    expect(await covered(names, LAKE_PG)).toEqual([{ start: 0, end: 600 }]);
    expect(rest.out).toMatchObject({
      recovery: { backlog: { rawUnreadRecords: 0, maxLagRecords: 0 } },
    });

    // 5. Deletion vectors on: the table may no longer hold the raw role.
    const refused = await recoverInChild(names, 'deletionVectors');
    expect(refused.code).toBe(3);
    expect(String(refused.out['refused'])).toMatch(/delta\.enableDeletionVectors is true/);
  });

  // Each precondition of the raw role, flipped under a running ingest.
  const FLIPS: [string, Parameters<FakeCatalog['alter']>[1], RegExp][] = [
    [
      'deletion vectors',
      { properties: { 'delta.enableDeletionVectors': 'true' } },
      /delta\.enableDeletionVectors is true/,
    ],
    [
      'Iceberg compat',
      { properties: { 'delta.enableIcebergCompatV2': 'false' } },
      /delta\.enableIcebergCompatV2 is false/,
    ],
    [
      'UniForm formats',
      { properties: { 'delta.universalFormat.enabledFormats': 'hudi' } },
      /enabledFormats is hudi/,
    ],
    [
      'column mapping',
      { properties: { 'delta.columnMapping.mode': 'none' } },
      /delta\.columnMapping\.mode is none/,
    ],
    ['reader version', { minReaderVersion: 1 }, /minReaderVersion is 1/],
    ['writer version', { minWriterVersion: 6 }, /minWriterVersion is 6/],
  ];

  it.each(FLIPS)(
    '%s switched under running ingest stops the raw role at the next batch; the position never passes what raw acknowledged',
    async (_, change, named) => {
      const names = freshNames();
      const sourceDir = await tempDir('source');
      await writeRecords(sourceDir, '0001.ndjson', 0, RECORDS_PER_FILE);
      const catalog = await lakehouseCatalog(names);
      const zerobus = new FakeTransportFactory({ ackLatencyMs: 1 });
      // flipped once the third batch's describe has answered
      let describes = 0;
      const describe = catalog.describe.bind(catalog);
      catalog.describe = async (name) => {
        const t = await describe(name);
        if (++describes === 4) catalog.alter(name, change);
        return t;
      };
      const job = await openLakehouse({
        names,
        role: 'ingest',
        sourceDir,
        zerobus,
        catalog,
        pool,
        withSecondary: false,
        config: { maxBatchRecords: BATCH },
        log: quiet,
      });
      await expect(job.run()).rejects.toThrow(named);
      const rows = zerobus.server.batches.length * BATCH;
      expect(rows).toBeLessThan(RECORDS_PER_FILE);
      const store = new S3Coverage({
        s3: s3Config,
        bucket,
        prefix: names.prefix,
        sinks: [sinkId('raw')],
      });
      const cursor = await store.loadCursor({
        source: LAKE_CLUSTER,
        topic: LAKE_TOPIC,
        partition: 0,
      });
      await store.close();
      expect(cursor?.nextOffset ?? 0).toBeLessThanOrEqual(rows);
    },
  );
});
