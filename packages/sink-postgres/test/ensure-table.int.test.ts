import { afterAll, describe, expect, it } from 'vitest';
import { postgresUrl, uniqueName } from '@thalweg/test-services';
import pg from 'pg';
import { PostgresSink, PostgresSinkError, type PgTableSpec } from '../src/index.js';
import { ID, ordersSpec, quiet, recordingTarget, testPool } from './helpers.js';

const pool = testPool();
const schema = uniqueName('twg-sink');
afterAll(async () => {
  await pool.query(`drop schema if exists "${schema}" cascade`);
  await pool.end();
});

function open(spec: PgTableSpec): Promise<PostgresSink> {
  return PostgresSink.open({ id: ID, pool, table: spec, confirm: recordingTarget(), log: quiet });
}

async function mismatch(spec: PgTableSpec): Promise<PostgresSinkError> {
  const e: unknown = await open(spec).then(
    async (s) => {
      await s.close();
      return new Error('the table was accepted');
    },
    (err: unknown) => err,
  );
  if (!(e instanceof PostgresSinkError)) throw e;
  expect(e.code).toBe('TWG_PG_SINK_TABLE_MISMATCH');
  return e;
}

const inSchema = (): PgTableSpec => ({ ...ordersSpec(), schema });
const q = (spec: PgTableSpec) => `"${schema}"."${spec.name}"`;

describe('ensureTable', () => {
  it('fails the open, and does not end the process, when the server kills its connection mid-way', async () => {
    const spec = { ...inSchema(), name: uniqueName('killed') };
    const app = uniqueName('twg-ensure').replaceAll('-', '_');
    const own = new pg.Pool({ connectionString: postgresUrl(), application_name: app, max: 2 });
    own.on('error', quiet);
    // Hold the table's creation lock, so ensureTable waits on it with its client checked out.
    const holder = await pool.connect();
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `twg-sink-postgres:"${schema}"."${spec.name}"`,
    ]);
    const opening = PostgresSink.open({
      id: ID,
      pool: own,
      table: spec,
      confirm: recordingTarget(),
      log: quiet,
    });
    const outcome = opening.then(
      () => 'opened',
      () => 'refused',
    );
    const waiting = async () =>
      (
        await pool.query(
          "select pid from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
          [app],
        )
      ).rows.length > 0;
    while (!(await waiting())) await new Promise((resolve) => setImmediate(resolve));
    // The checked-out client's connection is killed: 'error' on the client, then the query fails.
    await pool.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [app],
    );
    expect(await outcome).toBe('refused');
    await holder.query('rollback');
    holder.release();
    await own.end();
  });

  it('creates the schema and table, and accepts the table it made on the next open', async () => {
    // Quotes and spaces in identifiers are quoted, never interpolated raw.
    const spec = { ...inSchema(), name: `${uniqueName('we"ird')} tbl` };
    await (await open(spec)).close();
    await (await open(spec)).close();
    const cols = await pool.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = $1 and table_name = $2 order by ordinal_position`,
      [schema, spec.name],
    );
    expect(cols.rows.map((r) => r.column_name)).toEqual([
      '_twg_record_id',
      'n',
      'label',
      'doc',
      'at',
    ]);
  });

  it('names a column the existing table is missing', async () => {
    const spec = inSchema();
    await pool.query(`create schema if not exists "${schema}"`);
    await pool.query(
      `create table ${q(spec)} (_twg_record_id bytea primary key, n bigint not null, label text not null, doc jsonb)`,
    );
    const e = await mismatch(spec);
    expect(e.column).toBe('at');
    expect(e.message).toContain('column "at" is missing');
  });

  it('names a column of another type or nullability, and a record id without a unique index', async () => {
    const spec = inSchema();
    await pool.query(
      `create table ${q(spec)} (_twg_record_id bytea, n integer not null, label text, doc jsonb, at timestamptz)`,
    );
    const e = await mismatch(spec);
    expect(e.column).toBe('_twg_record_id');
    expect(e.message).toContain('column "n" is integer, expected bigint');
    expect(e.message).toContain('column "label" is nullable in the table but NOT NULL in the spec');
  });

  it('refuses an extra NOT NULL column without a default, and allows one with a default', async () => {
    const spec = inSchema();
    await (await open(spec)).close();
    await pool.query(`alter table ${q(spec)} add column tenant text not null`);
    expect((await mismatch(spec)).column).toBe('tenant');
    await pool.query(`alter table ${q(spec)} alter column tenant set default 'x'`);
    await (await open(spec)).close();
  });
});
