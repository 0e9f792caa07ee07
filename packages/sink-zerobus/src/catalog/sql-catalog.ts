import { createRequire } from 'node:module';
import { ZerobusSinkError } from '../errors.js';
import type { StreamField } from '../transport.js';
import type { Catalog, TableColumn, TableDescription } from './catalog.js';

/** The one thing the catalog needs from a SQL connection. */
export interface SqlSession {
  query(sql: string): Promise<Record<string, unknown>[]>;
}

const SQL_TYPE: Readonly<Record<StreamField['type'], string | null>> = {
  boolean: 'BOOLEAN',
  int8: 'TINYINT',
  int16: 'SMALLINT',
  int32: 'INT',
  int64: 'BIGINT',
  float32: 'FLOAT',
  float64: 'DOUBLE',
  utf8: 'STRING',
  'large-utf8': 'STRING',
  binary: 'BINARY',
  'large-binary': 'BINARY',
  date32: 'DATE',
  date64: 'DATE',
  'timestamp-micros': 'TIMESTAMP',
  // Delta timestamps are microseconds: a nanosecond column would be truncated.
  'timestamp-nanos': null,
};

const FIELD_TYPE: Readonly<Record<string, StreamField['type']>> = {
  boolean: 'boolean',
  tinyint: 'int8',
  byte: 'int8',
  smallint: 'int16',
  short: 'int16',
  int: 'int32',
  integer: 'int32',
  bigint: 'int64',
  long: 'int64',
  float: 'float32',
  double: 'float64',
  string: 'utf8',
  binary: 'binary',
  date: 'date32',
  timestamp: 'timestamp-micros',
};

/**
 * The catalog over Databricks SQL: `CREATE TABLE IF NOT EXISTS … USING DELTA
 * TBLPROPERTIES (…)`, `DESCRIBE DETAIL` for properties and protocol versions,
 * and `information_schema.columns` for columns and nullability.
 *
 * Tested against a recording session (SQL produced, rows parsed), not
 * against a live warehouse, which the test machines cannot reach.
 */
export class SqlCatalog implements Catalog {
  constructor(private readonly session: SqlSession) {}

  async ensureTable(
    name: string,
    columns: readonly TableColumn[],
    properties: Readonly<Record<string, string>>,
  ): Promise<void> {
    const cols = columns.map((c) => {
      const type = SQL_TYPE[c.type];
      if (type === null)
        throw new ZerobusSinkError(
          'fatal-config',
          `column ${c.name}: ${c.type} has no lossless Delta type`,
        );
      return `${ident(c.name)} ${type}${c.nullable ? '' : ' NOT NULL'}`;
    });
    const props = Object.entries(properties).map(([k, v]) => `${literal(k)} = ${literal(v)}`);
    await this.session.query(
      `CREATE TABLE IF NOT EXISTS ${tableName(name)} (${cols.join(', ')}) USING DELTA` +
        (props.length > 0 ? ` TBLPROPERTIES (${props.join(', ')})` : ''),
    );
  }

  async describe(name: string): Promise<TableDescription | null> {
    const [catalog, schema, table] = parts(name);
    let detail: Record<string, unknown>[];
    try {
      detail = await this.session.query(`DESCRIBE DETAIL ${tableName(name)}`);
    } catch (e) {
      if (/TABLE_OR_VIEW_NOT_FOUND|not found/i.test(String(e))) return null;
      throw new ZerobusSinkError('transient', `DESCRIBE DETAIL ${name} failed`, e);
    }
    const row = detail[0];
    if (row === undefined) return null;
    const columns = await this.session.query(
      `SELECT column_name, data_type, is_nullable FROM ${ident(catalog)}.information_schema.columns ` +
        `WHERE table_schema = ${literal(schema)} AND table_name = ${literal(table)} ORDER BY ordinal_position`,
    );
    return {
      name,
      columns: columns.map((c) => {
        const column = String(c['column_name']);
        const sqlType = String(c['data_type']).toLowerCase();
        const type = FIELD_TYPE[sqlType];
        if (type === undefined)
          throw new ZerobusSinkError(
            'fatal-config',
            `column ${column} of ${name}: type ${sqlType} is not supported by the Zerobus sink`,
          );
        return { name: column, type, nullable: String(c['is_nullable']).toUpperCase() !== 'NO' };
      }),
      properties: toProperties(row['properties']),
      minReaderVersion: Number(row['minReaderVersion'] ?? 0),
      minWriterVersion: Number(row['minWriterVersion'] ?? 0),
    };
  }
}

/**
 * Opens a session with `@databricks/sql` (an optional dependency, loaded only
 * here). `host` is the workspace host, `path` the warehouse's HTTP path.
 */
export async function openDatabricksSqlSession(options: {
  host: string;
  path: string;
  token: string;
}): Promise<SqlSession & { close(): Promise<void> }> {
  let module: { DBSQLClient: new () => DbsqlClient };
  try {
    module = createRequire(import.meta.url)('@databricks/sql') as typeof module;
  } catch (e) {
    throw new ZerobusSinkError(
      'fatal-config',
      'the Databricks SQL catalog needs the optional dependency @databricks/sql',
      e,
    );
  }
  const client = await new module.DBSQLClient().connect(options);
  const session = await client.openSession();
  return {
    async query(sql) {
      const op = await session.executeStatement(sql);
      try {
        return await op.fetchAll();
      } finally {
        await op.close();
      }
    },
    async close() {
      await session.close();
      await client.close();
    },
  };
}

/** The part of @databricks/sql this module uses (the package ships its own types; this keeps it optional). */
interface DbsqlClient {
  connect(options: { host: string; path: string; token: string }): Promise<DbsqlClient>;
  openSession(): Promise<{
    executeStatement(
      sql: string,
    ): Promise<{ fetchAll(): Promise<Record<string, unknown>[]>; close(): Promise<unknown> }>;
    close(): Promise<unknown>;
  }>;
  close(): Promise<unknown>;
}

function parts(name: string): [string, string, string] {
  const p = name.split('.');
  if (p.length !== 3 || p.some((x) => x.length === 0)) {
    throw new ZerobusSinkError(
      'fatal-config',
      `table ${JSON.stringify(name)} must be catalog.schema.table`,
    );
  }
  return [p[0] ?? '', p[1] ?? '', p[2] ?? ''];
}

function tableName(name: string): string {
  return parts(name).map(ident).join('.');
}

function ident(value: string): string {
  return `\`${value.replaceAll('`', '``')}\``;
}

function literal(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function toProperties(value: unknown): Record<string, string> {
  if (value instanceof Map)
    return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), String(v)]));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
  if (typeof value === 'string') return toProperties(JSON.parse(value));
  return {};
}
