import { ConfigError, RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { shown } from './shown-value.js';

/** The column types the sink writes; each is sent as text or bytes and cast by the server. */
export const PG_COLUMN_TYPES = [
  'text',
  'bigint',
  'integer',
  'double precision',
  'boolean',
  'jsonb',
  'bytea',
  'timestamptz',
] as const;

export type PgColumnType = (typeof PG_COLUMN_TYPES)[number];

export interface PgColumnSpec {
  readonly name: string;
  readonly type: PgColumnType;
  readonly nullable: boolean;
}

/**
 * The table a sink writes. `_twg_record_id bytea PRIMARY KEY` is added by
 * the sink and must not be listed: it is what makes every write idempotent.
 */
export interface PgTableSpec {
  /** Defaults to `public`. */
  readonly schema?: string;
  readonly name: string;
  /** In the order of `PgRow.values`. */
  readonly columns: readonly PgColumnSpec[];
}

/** How format_type() spells each type, for comparing with an existing table. */
export const CATALOG_SPELLING: Record<PgColumnType, string> = {
  text: 'text',
  bigint: 'bigint',
  integer: 'integer',
  'double precision': 'double precision',
  boolean: 'boolean',
  jsonb: 'jsonb',
  bytea: 'bytea',
  timestamptz: 'timestamp with time zone',
};

/** A quoted identifier: any name is safe once quoted and its quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The quoted, schema-qualified name of the table. */
export function qualifiedName(spec: PgTableSpec): string {
  return `${quoteIdent(spec.schema ?? 'public')}.${quoteIdent(spec.name)}`;
}

const MAX_IDENT_BYTES = 63;

/**
 * Refuses a spec PostgreSQL would not store as written: an identifier over
 * 63 bytes is silently truncated by the server (two columns could become
 * one), NUL cannot be stored, and a duplicate or reserved column is ambiguous.
 * The spec is read as unknown data: JavaScript callers bypass the types.
 */
export function checkTableSpec(spec: PgTableSpec, path: string): PgTableSpec {
  const given: unknown = spec;
  if (typeof given !== 'object' || given === null) throw new ConfigError(path, 'must be an object');
  const { name, schema, columns } = given as Record<string, unknown>;
  checkIdent(name, `${path}.name`);
  if (schema !== undefined) checkIdent(schema, `${path}.schema`);
  if (!Array.isArray(columns) || columns.length === 0) {
    throw new ConfigError(`${path}.columns`, 'must be a non-empty array');
  }
  const seen = new Set<string>();
  columns.forEach((column: unknown, i) => {
    const at = `${path}.columns[${i}]`;
    if (typeof column !== 'object' || column === null) {
      throw new ConfigError(at, 'must be an object with name, type and nullable');
    }
    const c = column as Record<string, unknown>;
    const columnName = checkIdent(c['name'], `${at}.name`);
    if (columnName === RECORD_ID_COLUMN) {
      throw new ConfigError(
        `${at}.name`,
        `${RECORD_ID_COLUMN} is added by the sink; do not list it`,
      );
    }
    if (seen.has(columnName))
      throw new ConfigError(`${at}.name`, `duplicate column "${columnName}"`);
    seen.add(columnName);
    if (
      typeof c['type'] !== 'string' ||
      !(PG_COLUMN_TYPES as readonly string[]).includes(c['type'])
    ) {
      throw new ConfigError(
        `${at}.type`,
        `${shown(c['type'])} is not one of ${PG_COLUMN_TYPES.join(', ')}`,
      );
    }
    if (typeof c['nullable'] !== 'boolean') {
      throw new ConfigError(`${at}.nullable`, 'must be true or false');
    }
  });
  return spec;
}

function checkIdent(value: unknown, path: string): string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.includes('\u0000') ||
    Buffer.byteLength(value, 'utf8') > MAX_IDENT_BYTES
  ) {
    throw new ConfigError(
      path,
      `${shown(value)} must be a non-empty identifier of at most ${MAX_IDENT_BYTES} UTF-8 bytes without NUL`,
    );
  }
  return value;
}
