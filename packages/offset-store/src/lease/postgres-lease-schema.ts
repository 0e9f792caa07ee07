import type pg from 'pg';
import { LeaseError, invalidLeaseInput } from './lease-errors.js';

/** The lease schema version this code writes and reads (separate from coverage's). */
export const LEASE_SCHEMA_VERSION = 1;

export interface LeaseTables {
  readonly meta: string;
  readonly lease: string;
  /** The fencing-token sequence, as a quoted qualified name (for `nextval`). */
  readonly tokens: string;
}

/** Quoted, schema-qualified names; `schema` is validated as an identifier before it is quoted. */
export function leaseTables(schema: string): LeaseTables {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw invalidLeaseInput(
      'schema',
      `${JSON.stringify(schema)} is not a lower-case SQL identifier`,
    );
  }
  return {
    meta: `"${schema}".twg_lease_meta`,
    lease: `"${schema}".twg_lease`,
    tokens: `"${schema}".twg_lease_token`,
  };
}

/**
 * Migration 1. One row per key. The key is collated "C" so that a prefix
 * `LIKE` is an index range scan and `list` orders by UTF-8 bytes. Tokens
 * come from one sequence, so they increase across every key and survive
 * `clearCompleted` deleting a row: a fencing token is never handed out twice.
 */
const MIGRATION_1 = (t: LeaseTables) => `
  create table if not exists ${t.lease} (
    key text collate "C" primary key check (key <> ''),
    holder text not null check (holder <> ''),
    token bigint not null check (token > 0),
    state text not null check (state in ('held', 'released', 'complete')),
    expires_at timestamptz not null,
    completed_at timestamptz,
    updated_at timestamptz not null,
    constraint twg_lease_completed check ((state = 'complete') = (completed_at is not null))
  );
  create sequence if not exists ${t.tokens} as bigint;
`;

/**
 * Brings the lease tables to LEASE_SCHEMA_VERSION, or refuses a newer
 * version without touching it. Serialised across processes by an advisory
 * lock, so two stores opening at once migrate once.
 */
export async function migrateLeases(client: pg.ClientBase, schema: string): Promise<void> {
  const t = leaseTables(schema);
  await client.query('begin');
  try {
    await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `twg-lease-migrate:${schema}`,
    ]);
    await client.query(`create schema if not exists "${schema}"`);
    await client.query(
      `create table if not exists ${t.meta} (id integer primary key check (id = 1), version integer not null)`,
    );
    const found = await client.query<{ version: number }>(
      `select version from ${t.meta} where id = 1`,
    );
    const version = found.rows[0]?.version ?? 0;
    if (version > LEASE_SCHEMA_VERSION) {
      throw new LeaseError(
        'TWG_LEASE_FORMAT_NEWER',
        `${t.meta} is at schema version ${version}; this code knows ${LEASE_SCHEMA_VERSION} and will not use it (upgrade @thalweg/offset-store)`,
      );
    }
    if (version < 1) {
      await client.query(MIGRATION_1(t));
      await client.query(
        `insert into ${t.meta} (id, version) values (1, 1) on conflict (id) do update set version = 1`,
      );
    }
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  }
}
