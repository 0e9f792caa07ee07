import { describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { S3Client } from '@aws-sdk/client-s3';
import { InMemoryCoverage, InMemoryLeaseStore, WriteBehindCoverage } from '../src/index.js';
import { LevelDbCoverage } from '../src/leveldb/index.js';
import { PostgresCoverage, PostgresLeaseStore } from '../src/postgres/index.js';
import { S3Coverage, S3LeaseStore } from '../src/s3/index.js';
import { refusal } from './config-refusal.js';
import { A, B } from './contract/coverage-contract.js';

// Options are refused before any service is reached: nothing here connects.
const s3 = { region: 'us-east-1', endpoint: 'http://127.0.0.1:1', forcePathStyle: true };
const url = 'postgres://nobody@127.0.0.1:1/none';

async function bad(run: () => unknown, path: string, reason: RegExp | string): Promise<void> {
  const e = await refusal(run);
  expect(e.code).toBe('TWG_CONFIG_INVALID');
  expect(e.path).toBe(path);
  expect(e.reason).toMatch(reason);
}

describe('store options: an unknown key is refused by its own path', () => {
  it('inMemoryCoverage', async () => {
    await bad(
      () => new InMemoryCoverage({ sinks: [A], sinkz: [B] } as never),
      'inMemoryCoverage.sinkz',
      /unknown key/,
    );
  });

  it('levelDbCoverage', async () => {
    await bad(
      () => LevelDbCoverage.open({ location: '/nowhere', sinks: [A], sync: true } as never),
      'levelDbCoverage.sync',
      /unknown key/,
    );
  });

  it('postgresCoverage', async () => {
    await bad(
      () => PostgresCoverage.open({ pool: url, sinks: [A], schemaName: 'x' } as never),
      'postgresCoverage.schemaName',
      /unknown key/,
    );
  });

  it('s3Coverage, also inside retry', async () => {
    await bad(
      () => new S3Coverage({ s3, bucket: 'b', sinks: [A], retry: { attempts: 3 } } as never),
      's3Coverage.retry.attempts',
      /unknown key/,
    );
  });

  it('writeBehindCoverage, listed with every other problem', async () => {
    const durable = new InMemoryCoverage({ sinks: [A] });
    const e = await refusal(
      () => new WriteBehindCoverage({ local: null, durable, checkpointEveryMz: 1000 } as never),
    );
    expect(e.path).toBe('writeBehindCoverage.local');
    expect(e.message).toContain(
      'writeBehindCoverage.checkpointEveryMz: is not an option here (unknown key)',
    );
  });

  it('inMemoryLeases, postgresLeases, s3Leases', async () => {
    await bad(
      () => new InMemoryLeaseStore({ clock: Date.now } as never),
      'inMemoryLeases.clock',
      /unknown key/,
    );
    await bad(
      () => PostgresLeaseStore.open({ connectionString: url, schemaz: 'x' } as never),
      'postgresLeases.schemaz',
      /unknown key/,
    );
    await bad(
      () => S3LeaseStore.open({ s3, bucket: 'b', clockSkewMs: 5 } as never),
      's3Leases.clockSkewMs',
      /unknown key/,
    );
  });
});

describe('store options: a bad value is refused naming its field', () => {
  it('sinks: listed twice, not a sink id (none is a cursor-only store)', async () => {
    const cursorsOnly = new InMemoryCoverage({ sinks: [] });
    expect(cursorsOnly.knows(A)).toBe(false);
    await cursorsOnly.close();
    await bad(
      () => new InMemoryCoverage({ sinks: [A, B, A] }),
      'inMemoryCoverage.sinks[2]',
      `"${A}" is listed twice`,
    );
    await bad(
      () => LevelDbCoverage.open({ location: '/nowhere', sinks: ['Not A Sink'] } as never),
      'levelDbCoverage.sinks[0]',
      /not a sink id/,
    );
  });

  it('levelDbCoverage.location', async () => {
    await bad(
      () => LevelDbCoverage.open({ location: '', sinks: [A] }),
      'levelDbCoverage.location',
      /non-empty/,
    );
  });

  it('postgresCoverage.pool and schema', async () => {
    await bad(
      () => PostgresCoverage.open({ pool: { query: 1 } as never, sinks: [A] }),
      'postgresCoverage.pool',
      /pg\.Pool or a non-empty connection string/,
    );
    const pool = new pg.Pool({ connectionString: url });
    await bad(
      () => PostgresCoverage.open({ pool, schema: 'Bad"Name', sinks: [A] }),
      'postgresCoverage.schema',
      /lower-case SQL identifier/,
    );
    await pool.end();
  });

  it('s3Coverage.bucket and retry', async () => {
    await bad(
      () => new S3Coverage({ s3, bucket: '', sinks: [A] }),
      's3Coverage.bucket',
      /bucket name/,
    );
    await bad(
      () =>
        new S3Coverage({
          s3: new S3Client(s3),
          bucket: 'b',
          sinks: [A],
          retry: { baseDelayMs: -1 },
        }),
      's3Coverage.retry.baseDelayMs',
      /\[0, 2147483647\]/,
    );
  });

  it('writeBehindCoverage.checkpointIntervalMs and local', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-options-'));
    const local = await LevelDbCoverage.open({ location: dir, sinks: [A] });
    const durable = new InMemoryCoverage({ sinks: [A] });
    try {
      await bad(
        () => new WriteBehindCoverage({ local, durable, checkpointIntervalMs: -5 }),
        'writeBehindCoverage.checkpointIntervalMs',
        /positive number of milliseconds/,
      );
      await bad(
        () =>
          new WriteBehindCoverage({ local: durable as never, durable, checkpointIntervalMs: 1000 }),
        'writeBehindCoverage.local',
        /LevelDbCoverage/,
      );
    } finally {
      await local.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('inMemoryLeases.now, postgresLeases pool/connectionString, s3Leases', async () => {
    await bad(() => new InMemoryLeaseStore({ now: 5 } as never), 'inMemoryLeases.now', /function/);
    await bad(
      () => PostgresLeaseStore.open({ pool: 'x' } as never),
      'postgresLeases.pool',
      /pg\.Pool/,
    );
    await bad(() => PostgresLeaseStore.open({} as never), 'postgresLeases.pool', /exactly one of/);
    await bad(
      () => S3LeaseStore.open({ s3, bucket: 'b', retry: { maxDelayMs: -1 } }),
      's3Leases.retry.maxDelayMs',
      /milliseconds/,
    );
    await bad(() => S3LeaseStore.open({ s3 } as never), 's3Leases.bucket', /bucket name/);
  });
});
