import type pg from 'pg';
import { CoverageError } from '../errors.js';

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = 1;

export interface Tables {
  readonly meta: string;
  readonly coverage: string;
  readonly cursor: string;
}

/** Quoted, schema-qualified table names; `schema` is validated as an identifier. */
export function tables(schema: string): Tables {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `schema: ${JSON.stringify(schema)} is not a lower-case SQL identifier`,
    );
  }
  return {
    meta: `"${schema}".twg_coverage_meta`,
    coverage: `"${schema}".twg_coverage`,
    cursor: `"${schema}".twg_source_cursor`,
  };
}

/**
 * Migration 1. One row per covered range, keyed so that a destination's
 * coverage is an index range scan; the check constraint refuses inverted and
 * negative ranges even from a hand-written statement.
 */
const MIGRATION_1 = (schema: string, t: Tables) => `
  create schema if not exists "${schema}";
  create table if not exists ${t.coverage} (
    sink text not null,
    topic text not null,
    partition integer not null,
    start_offset bigint not null,
    end_offset bigint not null,
    primary key (sink, topic, partition, start_offset),
    constraint twg_coverage_range check (start_offset >= 0 and end_offset > start_offset)
  );
  create table if not exists ${t.cursor} (
    source text not null,
    topic text not null,
    partition integer not null,
    next_offset bigint not null check (next_offset >= 0),
    cursor jsonb not null,
    updated_at timestamptz not null default now(),
    primary key (source, topic, partition)
  );
`;

/**
 * Brings the schema to SCHEMA_VERSION, or refuses a newer one without
 * touching it. Serialised across processes by an advisory lock, so two
 * stores opening at once migrate once.
 */
export async function migrate(client: pg.ClientBase, schema: string): Promise<void> {
  const t = tables(schema);
  await client.query('begin');
  try {
    await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `twg-migrate:${schema}`,
    ]);
    await client.query(`create schema if not exists "${schema}"`);
    await client.query(
      `create table if not exists ${t.meta} (id integer primary key check (id = 1), version integer not null)`,
    );
    const found = await client.query<{ version: number }>(
      `select version from ${t.meta} where id = 1`,
    );
    const version = found.rows[0]?.version ?? 0;
    if (version > SCHEMA_VERSION) {
      throw new CoverageError(
        'TWG_COVERAGE_SCHEMA_NEWER',
        `${t.meta} is at schema version ${version}; this code knows ${SCHEMA_VERSION} and will not write to it (upgrade @thalweg/offset-store)`,
      );
    }
    if (version < 1) {
      await client.query(MIGRATION_1(schema, t));
      await client.query(
        `insert into ${t.meta} (id, version) values (1, 1) on conflict (id) do update set version = 1`,
      );
    }
    await client.query('commit');
  } catch (e) {
    await client.query('rollback');
    throw e;
  }
}
