import { afterAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { sinkId } from '@thalweg/connector-core';
import { postgresUrl, uniqueIdentifier } from '@thalweg/test-services';
import { PostgresCoverage } from '../../src/postgres/postgres-coverage.js';
import { PostgresLeaseStore } from '../../src/lease/postgres-lease-store.js';
import type { Lease } from '../../src/lease/lease-store.js';
import { refusal } from '../config-refusal.js';
import { describeLeaseContract } from './lease-contract.js';

const pool = new pg.Pool({ connectionString: postgresUrl(), max: 12 });
const schemas: string[] = [];
function freshSchema(): string {
  const s = uniqueIdentifier('twg_lease');
  schemas.push(s);
  return s;
}
afterAll(async () => {
  for (const s of schemas) await pool.query(`drop schema if exists "${s}" cascade`);
  await pool.end();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The database's clock, in epoch milliseconds. */
async function dbNow(): Promise<number> {
  const r = await pool.query<{ ms: string }>(
    'select floor(extract(epoch from clock_timestamp()) * 1000)::bigint::text as ms',
  );
  return Number(r.rows[0]?.ms);
}

// Expiry is the database's clock, which no test can move: the TTL is long
// enough that a loaded machine finishes a case's calls inside it.
describeLeaseContract('PostgreSQL', {
  ttlMs: 1500,
  fresh: async () => ({
    store: await PostgresLeaseStore.open({ pool, schema: freshSchema() }),
    advance: sleep,
  }),
});

describe('PostgresLeaseStore', () => {
  it('gives a key to exactly one of 8 concurrent claimers, round after round', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 8 }, () =>
        PostgresLeaseStore.open({ connectionString: postgresUrl(), schema }),
      ),
    );
    let lastToken = 0;
    for (let round = 0; round < 4; round++) {
      const won = await Promise.all(
        stores.map((s, i) => s.claim('sink-a/orders/0/3', `worker-${i}`, 60_000)),
      );
      const winners = won.filter((l): l is Lease => l !== null);
      expect(winners.length).toBe(1);
      const winner = winners[0]!;
      expect(winner.token).toBeGreaterThan(lastToken);
      lastToken = winner.token;
      expect(await stores[0]!.state('sink-a/orders/0/3')).toEqual({ kind: 'held', lease: winner });
      // Released, not waited out: the next round races for it at once, and a
      // slow machine cannot expire a lease between the claim and the check.
      await stores[won.indexOf(winner)]!.release(winner);
    }
    await Promise.all(stores.map((s) => s.close()));
  });

  it('decides expiry on the database clock: the client’s clock is never consulted', async () => {
    const store = await PostgresLeaseStore.open({ pool, schema: freshSchema() });
    const before = await dbNow();
    // Long enough that a loaded machine makes the next calls inside it.
    const ttl = 1500;
    const lease = await store.claim('w/1', 'worker-1', ttl);
    const after = await dbNow();
    if (lease === null) throw new Error('claim refused');
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + ttl);
    expect(lease.expiresAt).toBeLessThanOrEqual(after + ttl);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // A client clock an hour ahead would see the lease as long expired.
      vi.setSystemTime(Date.now() + 3_600_000);
      expect(await store.claim('w/1', 'worker-2', 300)).toBeNull();
      expect((await store.state('w/1')).kind).toBe('held');
      // A client clock an hour behind would see it live for another hour.
      vi.setSystemTime(Date.now() - 7_200_000);
      // Past the expiry on the database's clock: polled, not slept and then expected.
      while (lease.expiresAt >= (await dbNow())) await sleep(50);
      expect((await store.state('w/1')).kind).toBe('expired');
      expect(await store.claim('w/1', 'worker-2', 300)).toMatchObject({ holder: 'worker-2' });
    } finally {
      vi.useRealTimers();
    }
    await store.close();
  });

  it('keeps its own versioned tables beside the coverage tables of the same schema', async () => {
    const schema = freshSchema();
    const coverage = await PostgresCoverage.open({ pool, schema, sinks: [sinkId('sink-a')] });
    const store = await PostgresLeaseStore.open({ pool, schema });
    const again = await PostgresLeaseStore.open({ pool, schema });
    const meta = await pool.query(`select version from "${schema}".twg_lease_meta`);
    expect(meta.rows).toEqual([{ version: 1 }]);
    const tables = await pool.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = $1 order by table_name`,
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      'twg_coverage',
      'twg_coverage_meta',
      'twg_lease',
      'twg_lease_meta',
      'twg_source_cursor',
    ]);
    expect(await store.claim('w/1', 'h', 1000)).not.toBeNull();
    expect(await again.claim('w/1', 'h2', 1000)).toBeNull();
    await Promise.all([coverage.close(), store.close(), again.close()]);
    // The caller's pool is the caller's to end.
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('refuses lease tables of a newer schema version and leaves them untouched', async () => {
    const schema = freshSchema();
    const store = await PostgresLeaseStore.open({ pool, schema });
    const lease = await store.claim('w/1', 'h', 60_000);
    await store.close();
    await pool.query(`update "${schema}".twg_lease_meta set version = 2`);
    const err = await PostgresLeaseStore.open({ pool, schema }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWG_LEASE_FORMAT_NEWER' });
    expect((err as Error).message).toContain(`"${schema}".twg_lease_meta`);
    const rows = await pool.query(`select key, holder, token::int from "${schema}".twg_lease`);
    expect(rows.rows).toEqual([{ key: 'w/1', holder: 'h', token: lease?.token }]);
  });

  it('reports a failing statement as TWG_LEASE_STORE_FAILED naming the key, changing nothing, and recovers', async () => {
    const schema = freshSchema();
    const store = await PostgresLeaseStore.open({ pool, schema });
    const lease = await store.claim('w/1', 'worker-1', 60_000);
    if (lease === null) throw new Error('claim refused');
    await pool.query(
      `create function "${schema}".boom() returns trigger language plpgsql as $$ begin raise exception 'injected'; end $$`,
    );
    await pool.query(
      `create trigger boom before update on "${schema}".twg_lease for each row execute function "${schema}".boom()`,
    );
    const err = await store.complete(lease).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWG_LEASE_STORE_FAILED', errorClass: 'transient' });
    expect((err as Error).message).toContain('complete of lease "w/1"');
    expect(await store.state('w/1')).toEqual({ kind: 'held', lease });
    await pool.query(`drop trigger boom on "${schema}".twg_lease`);
    expect(await store.complete(lease)).toBe(true);
    await store.close();
  });

  it('fails to open against an unreachable server, and refuses a bad schema name', async () => {
    const unreachable = postgresUrl().replace(/:\d+\//, ':1/');
    await expect(
      PostgresLeaseStore.open({ connectionString: unreachable, schema: 'twg_nowhere' }),
    ).rejects.toMatchObject({ code: 'TWG_LEASE_STORE_FAILED' });
    const refused = await refusal(() => PostgresLeaseStore.open({ pool, schema: 'Bad"Name' }));
    expect(refused.path).toBe('postgresLeases.schema');
  });
});
