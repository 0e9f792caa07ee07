import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { postgresUrl, uniqueIdentifier } from '../src/index.js';

describe('PostgreSQL service', () => {
  const table = uniqueIdentifier('twg_probe');
  let a: pg.Client;
  let b: pg.Client;

  beforeAll(async () => {
    a = new pg.Client({ connectionString: postgresUrl() });
    b = new pg.Client({ connectionString: postgresUrl() });
    await Promise.all([a.connect(), b.connect()]);
    await a.query(`create table ${table} (id bigint primary key, body text not null)`);
  });

  afterAll(async () => {
    await a.query(`drop table if exists ${table}`);
    await Promise.all([a.end(), b.end()]);
  });

  it('makes rows visible to another connection only when the transaction commits', async () => {
    await a.query('begin');
    await a.query(`insert into ${table} values (1, 'one'), (2, 'two')`);
    const during = await b.query(`select count(*)::int as n from ${table}`);
    expect(during.rows[0]).toEqual({ n: 0 });
    await a.query('commit');
    const after = await b.query(`select count(*)::int as n from ${table}`);
    expect(after.rows[0]).toEqual({ n: 2 });
  });

  it('discards a rolled-back transaction', async () => {
    await a.query('begin');
    await a.query(`insert into ${table} values (3, 'three')`);
    await a.query('rollback');
    const rows = await b.query(`select id from ${table} order by id`);
    expect(rows.rows.map((r: { id: string }) => r.id)).toEqual(['1', '2']);
  });

  it('serialises conflicting writers on a row lock', async () => {
    await a.query('begin');
    await a.query(`update ${table} set body = 'a' where id = 1`);
    await b.query("set statement_timeout = '300ms'");
    await expect(b.query(`update ${table} set body = 'b' where id = 1`)).rejects.toMatchObject({
      code: '57014',
    });
    await a.query('commit');
  });
});
