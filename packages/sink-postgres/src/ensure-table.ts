import type pg from 'pg';
import { PostgresSinkError } from './errors.js';
import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { CATALOG_SPELLING, qualifiedName, quoteIdent, type PgTableSpec } from './table-spec.js';

interface CatalogColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly hasDefault: boolean;
  readonly attnum: number;
}

/**
 * Creates the table if it is missing, then verifies it against the spec,
 * whether it was just created or already there: every spec column present
 * with its type and nullability, `_twg_record_id bytea` under a plain
 * (non-partial, non-deferrable) unique index — the conflict target every
 * insert relies on — and no extra NOT NULL column without a default, which
 * would refuse every row. Serialised by an advisory lock, so two sinks
 * opening the same table at once create it once.
 */
export async function ensureTable(pool: pg.Pool, spec: PgTableSpec): Promise<void> {
  const table = qualifiedName(spec);
  const client = await pool.connect();
  // A checked-out client whose connection the server kills emits 'error';
  // with no listener that ends the process. The failure reaches us through
  // the query it broke.
  client.on('error', ignore);
  let failure: unknown = null;
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `twg-sink-postgres:${table}`,
    ]);
    const schema = spec.schema ?? 'public';
    const ns = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
    if (ns.rowCount === 0) await client.query(`create schema ${quoteIdent(schema)}`);
    let oid = await relationOid(client, table);
    if (oid === null) {
      await client.query(createTableSql(spec));
      oid = await relationOid(client, table);
    }
    if (oid === null) throw mismatch(spec, undefined, 'the table could not be created');
    await verify(client, spec, oid);
    await client.query('commit');
  } catch (e) {
    failure = e;
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.off('error', ignore);
    client.release(failure === null ? undefined : true);
  }
}

export function createTableSql(spec: PgTableSpec): string {
  const columns = spec.columns.map(
    (c) => `${quoteIdent(c.name)} ${c.type}${c.nullable ? '' : ' not null'}`,
  );
  return `create table ${qualifiedName(spec)} (${quoteIdent(RECORD_ID_COLUMN)} bytea primary key, ${columns.join(', ')})`;
}

async function relationOid(client: pg.ClientBase, table: string): Promise<number | null> {
  const found = await client.query<{ oid: number | null; kind: string | null }>(
    `select c.oid::int8::float8 as oid, c.relkind as kind
       from pg_class c where c.oid = to_regclass($1)`,
    [table],
  );
  const row = found.rows[0];
  if (row === undefined || row.oid === null) return null;
  if (row.kind !== 'r' && row.kind !== 'p') {
    throw new PostgresSinkError(
      'TWG_PG_SINK_TABLE_MISMATCH',
      { table },
      `is a relation of kind "${row.kind ?? '?'}", not a table`,
    );
  }
  return row.oid;
}

async function verify(client: pg.ClientBase, spec: PgTableSpec, oid: number): Promise<void> {
  const found = await client.query<CatalogColumn>(
    `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
            a.attnotnull as "notNull", a.attnum as attnum,
            (a.atthasdef or a.attidentity <> '' or a.attgenerated <> '') as "hasDefault"
       from pg_attribute a
      where a.attrelid = $1 and a.attnum > 0 and not a.attisdropped
      order by a.attnum`,
    [oid],
  );
  const byName = new Map(found.rows.map((c) => [c.name, c]));
  const problems: { column: string; reason: string }[] = [];
  const id = byName.get(RECORD_ID_COLUMN);
  if (id === undefined) {
    problems.push({ column: RECORD_ID_COLUMN, reason: 'is missing' });
  } else if (id.type !== 'bytea') {
    problems.push({ column: RECORD_ID_COLUMN, reason: `is ${id.type}, expected bytea` });
  } else {
    const unique = await client.query(
      `select 1 from pg_index i
        where i.indrelid = $1 and i.indisunique and i.indimmediate and i.indnatts = 1
          and i.indkey[0] = $2 and i.indpred is null and i.indexprs is null`,
      [oid, id.attnum],
    );
    if (unique.rowCount === 0) {
      problems.push({
        column: RECORD_ID_COLUMN,
        reason:
          'has no plain unique index or primary key of its own (ON CONFLICT needs one to deduplicate replays)',
      });
    }
  }
  for (const c of spec.columns) {
    const live = byName.get(c.name);
    if (live === undefined) {
      problems.push({ column: c.name, reason: `is missing (expected ${c.type})` });
      continue;
    }
    const expected = CATALOG_SPELLING[c.type];
    if (live.type !== expected) {
      problems.push({ column: c.name, reason: `is ${live.type}, expected ${expected}` });
    }
    if (live.notNull === c.nullable) {
      problems.push({
        column: c.name,
        reason: c.nullable
          ? 'is NOT NULL in the table but nullable in the spec'
          : 'is nullable in the table but NOT NULL in the spec',
      });
    }
  }
  const listed = new Set([RECORD_ID_COLUMN, ...spec.columns.map((c) => c.name)]);
  for (const live of found.rows) {
    if (!listed.has(live.name) && live.notNull && !live.hasDefault) {
      problems.push({
        column: live.name,
        reason: 'is NOT NULL without a default and not in the spec, so every insert would fail',
      });
    }
  }
  const [first] = problems;
  if (first !== undefined) {
    throw mismatch(
      spec,
      first.column,
      problems.map((p) => `column "${p.column}" ${p.reason}`).join('; '),
    );
  }
}

function mismatch(spec: PgTableSpec, column: string | undefined, reason: string) {
  return new PostgresSinkError(
    'TWG_PG_SINK_TABLE_MISMATCH',
    { table: qualifiedName(spec), ...(column === undefined ? {} : { column }) },
    `does not match the table spec: ${reason}`,
  );
}

function ignore(): void {
  // The broken query reports the failure; see ensureTable.
}
