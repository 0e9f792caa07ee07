import { describe, expect, it } from 'vitest';
import { derivedCoverage, sinkId } from '@thalweg/connector-core';
import type { Catalog, TableColumn } from '../src/catalog/catalog.js';
import { FakeCatalog } from '../src/catalog/fake-catalog.js';
import { PRIMARY_RAW_TABLE_PROPERTIES } from '../src/catalog/precondition.js';
import { SqlCatalog, type SqlSession } from '../src/catalog/sql-catalog.js';
import { FakeTransportFactory } from '../src/fake-transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { batchOf, quiet, recordingTarget, spanAt } from './helpers.js';

const ID = sinkId('zerobus');
const TABLE = 'main.thalweg.events';
const DECLARED: TableColumn[] = [{ name: 'n', type: 'int32', nullable: false }];

/** A catalog that counts the tables it was asked to create. */
function counting(inner: Catalog): Catalog & { ensured: string[] } {
  const ensured: string[] = [];
  return {
    ensured,
    ensureTable: async (name, columns, properties) => {
      ensured.push(name);
      await inner.ensureTable(name, columns, properties);
    },
    describe: (name) => inner.describe(name),
  };
}

function sinkOver(catalog: Catalog, tableProperties?: Record<string, string>) {
  const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams: 1 },
    fields: DECLARED,
    catalog,
    ...(tableProperties === undefined ? {} : { tableProperties }),
    factory,
    confirm: recordingTarget(),
    log: quiet,
  });
  return { sink, factory };
}

async function deliverOne(sink: ZerobusSink<'secondary'>): Promise<void> {
  await sink.submit(batchOf(2), spanAt(0), derivedCoverage(ID, spanAt(0)));
  await sink.flush();
}

describe('ZerobusSink provisions its table through the catalog', () => {
  it('creates a missing table from the declared fields, with the given properties', async () => {
    const fake = new FakeCatalog();
    const catalog = counting(fake);
    const { sink, factory } = sinkOver(catalog, PRIMARY_RAW_TABLE_PROPERTIES);
    await deliverOne(sink);
    expect(catalog.ensured).toEqual([TABLE]);
    const created = await fake.describe(TABLE);
    expect(created?.columns).toEqual(DECLARED);
    expect(created?.properties).toEqual(PRIMARY_RAW_TABLE_PROPERTIES);
    expect(factory.server.batches).toHaveLength(1);
    // A table created with those properties passes the raw preconditions.
    await expect(sink.checkRawPreconditions()).resolves.toMatchObject({ name: TABLE });
    await sink.close();
  });

  it('does not re-create an existing table, and streams with its columns', async () => {
    const fake = new FakeCatalog();
    await fake.ensureTable(
      TABLE,
      [...DECLARED, { name: 'note', type: 'utf8', nullable: true }],
      {},
    );
    const catalog = counting(fake);
    const { sink, factory } = sinkOver(catalog);
    await deliverOne(sink);
    await deliverOne(sink);
    expect(catalog.ensured).toEqual([]);
    expect(factory.opened[0]!.spec.fields.map((f) => f.name)).toEqual(['n', 'note']);
    await sink.close();
  });

  it('refuses, without creating anything, when no fields are declared and the table is missing', async () => {
    const catalog = counting(new FakeCatalog());
    const sink = new ZerobusSink<'secondary'>({
      id: ID,
      config: { table: TABLE, streams: 1 },
      catalog,
      factory: new FakeTransportFactory({ ackLatencyMs: 1 }),
      confirm: recordingTarget(),
      log: quiet,
    });
    await expect(deliverOne(sink)).rejects.toThrow(/not registered.*no fields or schema/);
    expect(catalog.ensured).toEqual([]);
    await sink.close();
  });
});

/** A recorded Databricks SQL session: DESCRIBE DETAIL fails as "not found" until the CREATE ran. */
function recordedSession(exists: boolean): SqlSession & { sql: string[] } {
  const sql: string[] = [];
  let created = exists;
  return {
    sql,
    query: async (q) => {
      sql.push(q);
      if (q.startsWith('CREATE TABLE IF NOT EXISTS')) {
        created = true;
        return [];
      }
      if (q.startsWith('DESCRIBE DETAIL')) {
        if (!created) throw new Error('[TABLE_OR_VIEW_NOT_FOUND] The table cannot be found');
        return [{ properties: {}, minReaderVersion: 1, minWriterVersion: 2 }];
      }
      return [{ column_name: 'n', data_type: 'INT', is_nullable: 'NO' }];
    },
  };
}

describe('ZerobusSink provisioning over the Databricks SQL catalog (recorded session)', () => {
  it('issues one CREATE TABLE for a missing table, then describes it', async () => {
    const session = recordedSession(false);
    const { sink, factory } = sinkOver(new SqlCatalog(session), {
      'delta.enableDeletionVectors': 'false',
    });
    await deliverOne(sink);
    await deliverOne(sink);
    expect(session.sql.filter((q) => q.startsWith('CREATE'))).toEqual([
      "CREATE TABLE IF NOT EXISTS `main`.`thalweg`.`events` (`n` INT NOT NULL) USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')",
    ]);
    expect(session.sql.filter((q) => q.startsWith('DESCRIBE DETAIL'))).toHaveLength(2);
    expect(factory.server.batches).toHaveLength(2);
    await sink.close();
  });

  it('issues no CREATE TABLE for a table that exists', async () => {
    const session = recordedSession(true);
    const { sink } = sinkOver(new SqlCatalog(session));
    await deliverOne(sink);
    expect(session.sql.some((q) => q.startsWith('CREATE'))).toBe(false);
    expect(session.sql.filter((q) => q.startsWith('DESCRIBE DETAIL'))).toHaveLength(1);
    await sink.close();
  });
});
