import pg from 'pg';
import { LeaseBackend } from './lease-backend.js';
import { LeaseError } from './lease-errors.js';
import { parsePostgresLeaseOptions } from './lease-options.js';
import { leaseStateOf, type LeaseRecord, type StoredLeaseState } from './lease-record.js';
import type { Lease, LeaseState } from './lease-store.js';
import { leaseTables, migrateLeases, type LeaseTables } from './postgres-lease-schema.js';

export type PostgresLeaseStoreOptions = (
  | {
      /** A pool the caller owns (and ends). */
      readonly pool: pg.Pool;
      readonly connectionString?: never;
    }
  | {
      /** A connection string for a pool this store owns and ends on close. */
      readonly connectionString: string;
      readonly pool?: never;
    }
) & {
  /** The schema holding the lease tables (colocate it with raw's and coverage's). */
  readonly schema?: string;
};

/** Epoch milliseconds of a timestamptz, computed by the server. */
const ms = (column: string) => `floor(extract(epoch from ${column}) * 1000)::bigint`;

interface LeaseRow {
  key: string;
  holder: string;
  token: string;
  state: StoredLeaseState;
  expires_ms: string;
  completed_ms: string | null;
  expired: boolean;
}

/**
 * Leases in PostgreSQL, one row per key. Every decision — is the lease
 * expired, when does it expire — is taken by the database on its own clock
 * (`clock_timestamp()`, read once per statement); the client sends no time
 * at all, so client clock skew cannot break exclusivity. Every operation is
 * one statement, so its check and its write are atomic: a claim is one
 * `INSERT ... ON CONFLICT DO UPDATE ... WHERE <claimable>`, which under
 * concurrent claims locks the row and re-checks the condition on the
 * winner's version, so exactly one claimant of a live key gets it.
 *
 * The schema version is checked (and migrated) when the store opens; a
 * newer version is refused there, untouched.
 */
export class PostgresLeaseStore extends LeaseBackend {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    private readonly t: LeaseTables,
  ) {
    super();
  }

  static async open(options: PostgresLeaseStoreOptions): Promise<PostgresLeaseStore> {
    const o = parsePostgresLeaseOptions(options);
    const schema = o.schema;
    const t = leaseTables(schema);
    const owns = o.pool === undefined;
    const pool = o.pool ?? new pg.Pool({ connectionString: o.connectionString, max: 4 });
    // An idle connection the server drops emits 'error' on the pool; without
    // a listener that crashes the process. The next query reports the failure.
    if (owns) pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      // Checked out, the client has no listener of the pool's: a connection
      // the server kills would end the process. The query reports it.
      const ignore = (): void => undefined;
      client.on('error', ignore);
      try {
        await migrateLeases(client, schema);
      } finally {
        client.off('error', ignore);
        client.release();
      }
    } catch (e) {
      if (owns) await pool.end();
      throw e instanceof LeaseError
        ? e
        : new LeaseError(
            'TWG_LEASE_STORE_FAILED',
            `cannot prepare the lease tables in "${schema}"`,
            e,
          );
    }
    return new PostgresLeaseStore(pool, owns, t);
  }

  protected async claimChecked(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    // `updated_at` of the proposed row carries this statement's clock reading
    // into the conflict branch (as `excluded.updated_at`).
    const rows = await this.query(
      'claim',
      key,
      `with clock as (select clock_timestamp() as now)
       insert into ${this.t.lease} as l (key, holder, token, state, expires_at, completed_at, updated_at)
       select $1, $2, nextval('${this.t.tokens}'), 'held', clock.now + $3::integer * interval '1 millisecond', null, clock.now
       from clock
       on conflict (key) do update
         set holder = excluded.holder, token = excluded.token, state = 'held',
             expires_at = excluded.expires_at, completed_at = null, updated_at = excluded.updated_at
         where l.state = 'released' or (l.state = 'held' and l.expires_at <= excluded.updated_at)
       returning ${this.columns('l')}`,
      [key, holder, ttlMs],
    );
    return this.leaseOf(rows[0]);
  }

  protected async renewChecked(lease: Lease, ttlMs: number): Promise<Lease | null> {
    // Not conditional on expiry: while the token is unchanged nobody has
    // claimed the key since, so extending it cannot create a second holder.
    const rows = await this.query(
      'renew',
      lease.key,
      `with clock as (select clock_timestamp() as now)
       update ${this.t.lease} as l
         set expires_at = clock.now + $4::integer * interval '1 millisecond', updated_at = clock.now
       from clock
       where l.key = $1 and l.holder = $2 and l.token = $3 and l.state = 'held'
       returning ${this.columns('l')}`,
      [lease.key, lease.holder, lease.token, ttlMs],
    );
    return this.leaseOf(rows[0]);
  }

  protected async completeChecked(lease: Lease): Promise<boolean> {
    // A row already completed by this very lease is left as it is and
    // answers true: the retry of a complete whose answer was lost.
    const rows = await this.query(
      'complete',
      lease.key,
      `with clock as (select clock_timestamp() as now)
       update ${this.t.lease} as l
         set state = 'complete', completed_at = coalesce(l.completed_at, clock.now), updated_at = clock.now
       from clock
       where l.key = $1 and l.holder = $2 and l.token = $3 and l.state in ('held', 'complete')
       returning l.key`,
      [lease.key, lease.holder, lease.token],
    );
    return rows.length === 1;
  }

  protected async releaseChecked(lease: Lease): Promise<void> {
    await this.query(
      'release',
      lease.key,
      `with clock as (select clock_timestamp() as now)
       update ${this.t.lease} as l
         set state = 'released', expires_at = clock.now, updated_at = clock.now
       from clock
       where l.key = $1 and l.holder = $2 and l.token = $3 and l.state = 'held'
       returning l.key`,
      [lease.key, lease.holder, lease.token],
    );
  }

  protected async stateChecked(key: string): Promise<LeaseState> {
    const rows = await this.query(
      'state',
      key,
      `select ${this.columns('l')} from ${this.t.lease} as l where l.key = $1`,
      [key],
    );
    const row = rows[0];
    return row === undefined
      ? { kind: 'free' }
      : leaseStateOf(key, this.recordOf(row), row.expired);
  }

  protected async listChecked(prefix: string): Promise<{ key: string; state: LeaseState }[]> {
    const rows = await this.query(
      'list',
      `${prefix}*`,
      `select ${this.columns('l')} from ${this.t.lease} as l
       where l.key like $1 escape '\\' order by l.key`,
      [likePrefix(prefix)],
    );
    return rows.map((row) => ({
      key: row.key,
      state: leaseStateOf(row.key, this.recordOf(row), row.expired),
    }));
  }

  protected async clearChecked(prefix: string): Promise<number> {
    const rows = await this.query(
      'clearCompleted',
      `${prefix}*`,
      `delete from ${this.t.lease} as l
       where l.state = 'complete' and l.key like $1 escape '\\'
       returning ${this.columns('l')}`,
      [likePrefix(prefix)],
    );
    return rows.length;
  }

  protected async dispose(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  /** Every column a lease needs, with expiry judged on the server's clock. */
  private columns(alias: string): string {
    return `${alias}.key, ${alias}.holder, ${alias}.token::text as token, ${alias}.state,
      ${ms(`${alias}.expires_at`)}::text as expires_ms,
      ${ms(`${alias}.completed_at`)}::text as completed_ms,
      ${alias}.expires_at <= clock_timestamp() as expired`;
  }

  private leaseOf(row: LeaseRow | undefined): Lease | null {
    if (row === undefined) return null;
    const r = this.recordOf(row);
    return { key: row.key, holder: r.holder, token: r.token, expiresAt: r.expiresAt };
  }

  private recordOf(row: LeaseRow): LeaseRecord {
    return {
      holder: row.holder,
      token: safe(row.token, row.key, 'token'),
      expiresAt: safe(row.expires_ms, row.key, 'expires_at'),
      state: row.state,
      completedAt:
        row.completed_ms === null ? null : safe(row.completed_ms, row.key, 'completed_at'),
    };
  }

  private async query(
    operation: string,
    key: string,
    text: string,
    values: unknown[],
  ): Promise<LeaseRow[]> {
    try {
      return (await this.pool.query<LeaseRow>(text, values)).rows;
    } catch (e) {
      throw new LeaseError(
        'TWG_LEASE_STORE_FAILED',
        `${operation} of lease ${JSON.stringify(key)} in ${this.t.lease} failed`,
        e,
      );
    }
  }
}

/** A LIKE pattern matching every string that starts with `prefix` literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function safe(value: string, key: string, column: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new LeaseError(
      'TWG_LEASE_CORRUPT',
      `${column} ${value} of lease ${JSON.stringify(key)} is not a safe integer`,
    );
  }
  return n;
}
