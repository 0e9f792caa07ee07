import { afterAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { offsetSpan } from '@thalweg/connector-core';
import { postgresUrl, uniqueIdentifier, waitFor } from '@thalweg/test-services';
import { PostgresCoverage } from '../../src/postgres/postgres-coverage.js';
import { A, B, describeCoverageContract, receipt } from '../contract/coverage-contract.js';

const pool = new pg.Pool({ connectionString: postgresUrl(), max: 12 });
const schemas: string[] = [];
function freshSchema(): string {
  const s = uniqueIdentifier('twg_cov');
  schemas.push(s);
  return s;
}
afterAll(async () => {
  for (const s of schemas) await pool.query(`drop schema if exists "${s}" cascade`);
  await pool.end();
});

const key = { sink: A, topic: 'orders', partition: 0 };

describeCoverageContract('PostgreSQL durable tier', {
  persistent: true,
  propertyRuns: 15,
  fresh: async (sinks) => {
    const schema = freshSchema();
    const store = await PostgresCoverage.open({ pool, schema, sinks });
    return {
      store,
      reopen: async () => {
        await store.close();
        return PostgresCoverage.open({ pool, schema, sinks });
      },
    };
  },
});

describe('PostgreSQL durable tier', () => {
  it('outlives the server dropping an idle connection of the pool it created from a URL', async () => {
    const app = uniqueIdentifier('twg_cov_app');
    const url = new URL(postgresUrl());
    url.searchParams.set('application_name', app);
    const store = await PostgresCoverage.open({
      pool: url.toString(),
      schema: freshSchema(),
      sinks: [A],
    });
    await store.covered(key);
    const open = async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            'select count(*) as n from pg_stat_activity where application_name = $1',
            [app],
          )
        ).rows[0]?.n,
      );
    expect(await open()).toBeGreaterThan(0);
    await pool.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [app],
    );
    // Without a listener the pool's 'error' event would end the process here.
    while ((await open()) > 0) await new Promise((resolve) => setImmediate(resolve));
    await expect(store.covered(key)).resolves.toBeDefined();
    await store.close();
  });

  it('sends a read once more after a lost connection, and reports a second loss or a refusal at once', async () => {
    const own = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
    const store = await PostgresCoverage.open({ pool: own, schema: freshSchema(), sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10)]);
    const lost = () =>
      Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
      });
    const send = vi.spyOn(own, 'query');
    send.mockRejectedValueOnce(lost());
    expect((await store.covered(key)).ranges()).toEqual([{ start: 0, end: 10 }]);
    expect(send).toHaveBeenCalledTimes(2);

    send.mockClear();
    send.mockRejectedValueOnce(lost()).mockRejectedValueOnce(lost());
    await expect(store.covered(key)).rejects.toMatchObject({ code: 'TWG_COVERAGE_BACKEND' });
    expect(send).toHaveBeenCalledTimes(2);

    send.mockClear();
    send.mockRejectedValueOnce(
      Object.assign(new Error('relation does not exist'), { code: '42P01' }),
    );
    await expect(store.covered(key)).rejects.toMatchObject({ code: 'TWG_COVERAGE_BACKEND' });
    expect(send).toHaveBeenCalledTimes(1);
    send.mockRestore();
    await store.close();
    await own.end();
  });

  it('commits rows and their coverage in the caller’s transaction, or neither', async () => {
    const schema = freshSchema();
    const store = await PostgresCoverage.open({ pool, schema, sinks: [A] });
    await pool.query(`create table "${schema}".rows (id int primary key)`);
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`insert into "${schema}".rows values (1), (2)`);
      await store.recordInTransaction(client, A, [offsetSpan('orders', 0, 0, 2)]);
      await client.query('rollback');
      expect((await store.covered(key)).rangeCount).toBe(0);

      await client.query('begin');
      await client.query(`insert into "${schema}".rows values (1), (2)`);
      await store.recordInTransaction(client, A, [offsetSpan('orders', 0, 0, 2)]);
      // Not visible to others before the commit: coverage never leads the rows.
      expect((await store.covered(key)).rangeCount).toBe(0);
      await client.query('commit');
    } finally {
      client.release();
    }
    expect((await store.covered(key)).ranges()).toEqual([{ start: 0, end: 2 }]);
    await store.close();
  });

  it('refuses a table from a newer schema version and changes nothing', async () => {
    const schema = freshSchema();
    const store = await PostgresCoverage.open({ pool, schema, sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10)]);
    await pool.query(`update "${schema}".twg_coverage_meta set version = 2`);
    await expect(store.recordDurable([receipt(A, 10, 20)])).rejects.toMatchObject({
      code: 'TWG_COVERAGE_SCHEMA_NEWER',
    });
    await expect(PostgresCoverage.open({ pool, schema, sinks: [A] })).rejects.toMatchObject({
      code: 'TWG_COVERAGE_SCHEMA_NEWER',
    });
    const rows = await pool.query(`select start_offset, end_offset from "${schema}".twg_coverage`);
    expect(rows.rows).toEqual([{ start_offset: '0', end_offset: '10' }]);
    await store.close();
  });

  it('unions the coverage of 8 concurrent writers on separate connections exactly', async () => {
    const schema = freshSchema();
    const first = await PostgresCoverage.open({ pool: postgresUrl(), schema, sinks: [A, B] });
    const writers = [
      first,
      ...(await Promise.all(
        Array.from({ length: 7 }, () =>
          PostgresCoverage.open({ pool: postgresUrl(), schema, sinks: [A, B] }),
        ),
      )),
    ];
    const truth = new Set<number>();
    const work = writers.map(async (w, i) => {
      for (let round = 0; round < 25; round++) {
        // Overlapping (shared stride) and disjoint (per-writer) ranges.
        const s1 = (round * 37 + i * 11) % 900;
        const s2 = 1000 + i * 200 + round * 8;
        const ranges: [number, number][] = [
          [s1, s1 + 5 + (i % 3)],
          [s2, s2 + 3],
        ];
        for (const [s, e] of ranges) for (let o = s; o < e; o++) truth.add(o);
        await w.recordDurable(ranges.map(([s, e]) => receipt(A, s, e)));
      }
    });
    await Promise.all(work);
    const covered = await first.covered(key);
    for (let o = 0; o < 2700; o++) expect(covered.contains(o)).toBe(truth.has(o));
    // The advisory lock kept the stored rows in normal form.
    const rows = await pool.query(
      `select count(*)::int as n from "${schema}".twg_coverage where sink = 'sink-a'`,
    );
    expect(rows.rows[0]).toEqual({ n: covered.rangeCount });
    await Promise.all(writers.map((w) => w.close()));
  });

  it('rolls back a whole call when a statement fails mid-call', async () => {
    const schema = freshSchema();
    const store = await PostgresCoverage.open({ pool, schema, sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10)]);
    // A trigger that fails on the second destination: the first must not stay.
    await pool.query(
      `create function "${schema}".boom() returns trigger language plpgsql as $$ begin if new.partition = 1 then raise exception 'injected'; end if; return new; end $$`,
    );
    await pool.query(
      `create trigger boom before insert on "${schema}".twg_coverage for each row execute function "${schema}".boom()`,
    );
    await expect(
      store.recordDurable([receipt(A, 10, 20), receipt(A, 0, 5, 'orders', 1)]),
    ).rejects.toMatchObject({
      code: 'TWG_COVERAGE_BACKEND',
    });
    expect((await store.covered(key)).ranges()).toEqual([{ start: 0, end: 10 }]);
    await store.close();
  });

  it('records nothing when the connection is killed mid-transaction, and recovers on retry', async () => {
    const schema = freshSchema();
    const store = await PostgresCoverage.open({ pool: postgresUrl(), schema, sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10)]);
    await pool.query(
      `create function "${schema}".stall() returns trigger language plpgsql as $$ begin if new.partition = 1 then perform pg_sleep(5); end if; return new; end $$`,
    );
    await pool.query(
      `create trigger stall before insert on "${schema}".twg_coverage for each row execute function "${schema}".stall()`,
    );
    // The expectation is attached at once: the write can fail while the loop below
    // is still between polls, and a rejection nobody observes yet fails the run.
    const refused = expect(
      store.recordDurable([receipt(A, 10, 20), receipt(A, 0, 5, 'orders', 1)]),
    ).rejects.toMatchObject({ code: 'TWG_COVERAGE_BACKEND' });
    // Wait until the merge is inside the stalled statement, then kill its backend.
    await waitFor(
      async () => {
        const killed = await pool.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where wait_event = 'PgSleep' and pid <> pg_backend_pid() and strpos(query, $1) > 0`,
          [`"${schema}"`],
        );
        return killed.rowCount !== null && killed.rowCount > 0;
      },
      'the merge stalled in its statement, to terminate its backend',
      { timeoutMs: 10_000 },
    );
    await refused;
    expect((await store.covered(key)).ranges()).toEqual([{ start: 0, end: 10 }]);
    await pool.query(`drop trigger stall on "${schema}".twg_coverage`);
    await store.recordDurable([receipt(A, 10, 20), receipt(A, 0, 5, 'orders', 1)]);
    expect((await store.covered(key)).ranges()).toEqual([{ start: 0, end: 20 }]);
    await store.close();
  });
});
