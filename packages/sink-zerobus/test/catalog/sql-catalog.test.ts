import { describe, expect, it } from 'vitest';
import { SqlCatalog, type SqlSession } from '../../src/catalog/sql-catalog.js';

function session(
  answers: (sql: string) => Record<string, unknown>[] | Error,
): SqlSession & { sql: string[] } {
  const sql: string[] = [];
  return {
    sql,
    query: async (q) => {
      sql.push(q);
      const a = answers(q);
      if (a instanceof Error) throw a;
      return a;
    },
  };
}

describe('SqlCatalog', () => {
  it('creates a Delta table with quoted identifiers, nullability and properties', async () => {
    const s = session(() => []);
    await new SqlCatalog(s).ensureTable(
      'main.raw.ev`ents',
      [
        { name: 'id', type: 'int64', nullable: false },
        { name: 'body', type: 'utf8', nullable: true },
      ],
      { 'delta.enableDeletionVectors': 'false', "it's": 'x' },
    );
    expect(s.sql).toEqual([
      "CREATE TABLE IF NOT EXISTS `main`.`raw`.`ev``ents` (`id` BIGINT NOT NULL, `body` STRING) USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'false', 'it\\'s' = 'x')",
    ]);
  });

  it('refuses a column type Delta cannot hold losslessly', async () => {
    await expect(
      new SqlCatalog(session(() => [])).ensureTable(
        'a.b.c',
        [{ name: 'ts', type: 'timestamp-nanos', nullable: true }],
        {},
      ),
    ).rejects.toThrow(/column ts: timestamp-nanos/);
  });

  it('describes properties, protocol versions and columns', async () => {
    const s = session((q) =>
      q.startsWith('DESCRIBE DETAIL')
        ? [
            {
              properties: { 'delta.enableIcebergCompatV2': 'true' },
              minReaderVersion: 2,
              minWriterVersion: 7,
            },
          ]
        : [
            { column_name: 'id', data_type: 'BIGINT', is_nullable: 'NO' },
            { column_name: 'body', data_type: 'STRING', is_nullable: 'YES' },
          ],
    );
    const d = await new SqlCatalog(s).describe('main.raw.events');
    expect(d).toEqual({
      name: 'main.raw.events',
      columns: [
        { name: 'id', type: 'int64', nullable: false },
        { name: 'body', type: 'utf8', nullable: true },
      ],
      properties: { 'delta.enableIcebergCompatV2': 'true' },
      minReaderVersion: 2,
      minWriterVersion: 7,
    });
    expect(s.sql[1]).toContain("WHERE table_schema = 'raw' AND table_name = 'events'");
  });

  it('answers null for a table that is not there, and a transient error for other failures', async () => {
    const missing = session(() => new Error('[TABLE_OR_VIEW_NOT_FOUND] The table cannot be found'));
    expect(await new SqlCatalog(missing).describe('main.raw.x')).toBeNull();
    const down = session(() => new Error('socket hang up'));
    await expect(new SqlCatalog(down).describe('main.raw.x')).rejects.toMatchObject({
      failure: 'transient',
    });
  });
});
