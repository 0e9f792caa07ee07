import pg from 'pg';
import type { OffsetSpan, SinkId, SourceCursor } from '@thalweg/connector-core';
import { CoverageBackend } from '../coverage-backend.js';
import type { CoverageDelta, CoverageKey, CursorKey } from '../coverage-store.js';
import { checkRewind } from '../cursor-check.js';
import { CoverageError } from '../errors.js';
import { RangeSet } from '../range-set.js';
import { checkDeltas } from '../receipt-check.js';
import { isLostConnection } from './pg-failure.js';
import { parsePostgresCoverageOptions } from './postgres-coverage-options.js';
import { migrate, SCHEMA_VERSION, tables, type Tables } from './postgres-schema.js';

export interface PostgresCoverageOptions {
  /** A pool the caller owns, or a connection string for a pool this store owns. */
  readonly pool: pg.Pool | string;
  /** The schema holding the tables (colocate it with raw's tables). */
  readonly schema?: string;
  readonly sinks: readonly SinkId[];
}

/**
 * The durable tier in PostgreSQL: one row per covered range, merged by union
 * in SQL. Merges of one destination are serialised across every process by a
 * transaction-scoped advisory lock, so the rows stay in normal form; even
 * without it the read side would union overlapping rows, never lose one.
 */
export class PostgresCoverage extends CoverageBackend {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    private readonly schema: string,
    private readonly t: Tables,
    sinks: readonly SinkId[],
  ) {
    super(sinks);
  }

  static async open(options: PostgresCoverageOptions): Promise<PostgresCoverage> {
    const o = parsePostgresCoverageOptions(options);
    const schema = o.schema;
    const t = tables(schema);
    const owns = typeof o.pool === 'string';
    const pool =
      typeof o.pool === 'string' ? new pg.Pool({ connectionString: o.pool, max: 4 }) : o.pool;
    // A pool without an 'error' listener takes the process down when the
    // server drops one of its idle connections (a restart, a failover, an
    // idle timeout). The next query opens a fresh one; a caller's own pool
    // is the caller's to listen to.
    if (owns) pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      // Checked out, the client has no listener of the pool's: a connection
      // the server kills would end the process. The query reports it.
      const ignore = (): void => undefined;
      client.on('error', ignore);
      try {
        await migrate(client, schema);
      } finally {
        client.off('error', ignore);
        client.release();
      }
    } catch (e) {
      if (owns) await pool.end();
      throw e instanceof CoverageError
        ? e
        : new CoverageError(
            'TWG_COVERAGE_BACKEND',
            `cannot prepare the coverage schema "${schema}"`,
            e,
          );
    }
    return new PostgresCoverage(pool, owns, schema, t, o.sinks);
  }

  /**
   * Records coverage inside a transaction the caller holds, so a
   * transactional sink commits its rows and their coverage together: the
   * commit IS the durable acknowledgement, and a rollback takes both back
   * (the exactly-once path). The caller runs `begin`/`commit`.
   */
  async recordInTransaction(
    client: pg.ClientBase,
    sink: SinkId,
    spans: readonly OffsetSpan[],
  ): Promise<void> {
    this.ensureOpen();
    const deltas = spans.map((s) => ({
      key: { sink, topic: s.topic, partition: s.partition },
      ranges: [{ start: s.start, end: s.end }],
    }));
    checkDeltas(deltas, this.sinks);
    await this.checkVersion(client);
    for (const d of [...deltas].sort((a, b) => compareKeys(a.key, b.key)))
      await this.mergeOne(client, d);
  }

  protected async mergeChecked(deltas: readonly CoverageDelta[]): Promise<void> {
    await this.transaction(async (client) => {
      await this.checkVersion(client);
      // Lock destinations in one global order, so two calls naming the same
      // destinations in different orders cannot deadlock on the advisory locks.
      const ordered = [...deltas].sort((a, b) => compareKeys(a.key, b.key));
      for (const d of ordered) if (d.ranges.length > 0) await this.mergeOne(client, d);
    });
  }

  protected async read(key: CoverageKey): Promise<RangeSet> {
    const rows = await this.query<{ s: string; e: string }>(
      `select start_offset as s, end_offset as e from ${this.t.coverage} where sink = $1 and topic = $2 and partition = $3 order by start_offset`,
      [key.sink, key.topic, key.partition],
    );
    return RangeSet.of(rows.map((r) => ({ start: safe(r.s, key), end: safe(r.e, key) })));
  }

  protected async listDestinations(): Promise<CoverageKey[]> {
    const rows = await this.query<{ sink: string; topic: string; partition: number }>(
      `select distinct sink, topic, partition from ${this.t.coverage} order by sink, topic, partition`,
    );
    return rows.map((r) => ({ sink: r.sink as SinkId, topic: r.topic, partition: r.partition }));
  }

  protected async writeCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    // Never back: a lower next_offset does not replace a higher one (laterCursor).
    await this.query(
      `insert into ${this.t.cursor} as c (source, topic, partition, next_offset, cursor) values ($1, $2, $3, $4, $5)
       on conflict (source, topic, partition) do update
         set next_offset = excluded.next_offset, cursor = excluded.cursor, updated_at = now()
         where c.next_offset <= excluded.next_offset`,
      [key.source, key.topic, key.partition, cursor.nextOffset, JSON.stringify(cursor)],
    );
  }

  /** The one statement that may lower next_offset: the row is locked, checked and replaced in one transaction. */
  protected async replaceCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    await this.transaction(async (client) => {
      const found = await client.query<{ cursor: SourceCursor }>(
        `select cursor from ${this.t.cursor} where source = $1 and topic = $2 and partition = $3 for update`,
        [key.source, key.topic, key.partition],
      );
      checkRewind(key, found.rows[0]?.cursor ?? null, cursor);
      await client.query(
        `update ${this.t.cursor} set next_offset = $4, cursor = $5, updated_at = now()
         where source = $1 and topic = $2 and partition = $3`,
        [key.source, key.topic, key.partition, cursor.nextOffset, JSON.stringify(cursor)],
      );
    });
  }

  protected async readCursor(key: CursorKey): Promise<SourceCursor | null> {
    const rows = await this.query<{ cursor: SourceCursor }>(
      `select cursor from ${this.t.cursor} where source = $1 and topic = $2 and partition = $3`,
      [key.source, key.topic, key.partition],
    );
    return rows[0]?.cursor ?? null;
  }

  protected async release(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  /**
   * Union merge of one destination in one statement: delete every stored
   * range that overlaps or touches the incoming ones' span, then insert the
   * islands of incoming ∪ deleted (gaps-and-islands over the sorted ranges:
   * a range starts a new island only when it begins after everything before
   * it has ended). Ranges between incoming ones are deleted and re-inserted
   * unchanged, so nothing can be lost or widened.
   */
  private async mergeOne(client: pg.ClientBase, d: CoverageDelta): Promise<void> {
    const { sink, topic, partition } = d.key;
    await client.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `twg-coverage:${this.schema}:${sink}:${topic}:${partition}`,
    ]);
    await client.query(
      `with incoming(s, e) as (select * from unnest($4::bigint[], $5::bigint[])),
       bounds as materialized (
         select min(s) as lo, max(e) as hi,
           -- Stored ranges are disjoint, so only the last one starting at or
           -- before lo can reach into [lo, hi] from the left: scan from it,
           -- not from the destination's first range.
           coalesce(
             (select max(start_offset) from ${this.t.coverage}
               where sink = $1 and topic = $2 and partition = $3 and start_offset <= (select min(s) from incoming)),
             (select min(s) from incoming)
           ) as floor
         from incoming
       ),
       touched as (
         -- Scalar subqueries, not a join: they run once as init plans and
         -- bound an index range scan, whatever the table statistics say.
         delete from ${this.t.coverage} c
         where c.sink = $1 and c.topic = $2 and c.partition = $3
           and c.start_offset >= (select floor from bounds)
           and c.start_offset <= (select hi from bounds)
           and c.end_offset >= (select lo from bounds)
         returning c.start_offset as s, c.end_offset as e
       ),
       everything as (select s, e from incoming union all select s, e from touched),
       ordered as (
         select s, e, max(e) over (order by s, e rows between unbounded preceding and 1 preceding) as reach
         from everything
       ),
       islands as (
         select s, e, sum(case when reach is null or s > reach then 1 else 0 end) over (order by s, e) as island
         from ordered
       )
       insert into ${this.t.coverage} (sink, topic, partition, start_offset, end_offset)
       select $1, $2, $3, min(s), max(e) from islands group by island`,
      [sink, topic, partition, d.ranges.map((r) => r.start), d.ranges.map((r) => r.end)],
    );
  }

  private async checkVersion(client: pg.ClientBase): Promise<void> {
    const found = await client.query<{ version: number }>(
      `select version from ${this.t.meta} where id = 1`,
    );
    const version = found.rows[0]?.version ?? 0;
    if (version !== SCHEMA_VERSION) {
      throw new CoverageError(
        version > SCHEMA_VERSION ? 'TWG_COVERAGE_SCHEMA_NEWER' : 'TWG_COVERAGE_CORRUPT',
        `${this.t.meta} is at schema version ${version}; this code writes ${SCHEMA_VERSION}; nothing was recorded`,
      );
    }
  }

  private async transaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.connect();
    let failure: unknown = null;
    try {
      await client.query('begin');
      await work(client);
      await client.query('commit');
    } catch (e) {
      failure = e;
      await client.query('rollback').catch(() => undefined);
      throw e instanceof CoverageError
        ? e
        : new CoverageError(
            'TWG_COVERAGE_BACKEND',
            'the coverage transaction failed and was rolled back; nothing was recorded',
            e,
          );
    } finally {
      // After any failure the client is destroyed rather than pooled: it may
      // be a connection the server killed, which must not serve the retry.
      client.release(failure === null ? undefined : toError(failure));
    }
  }

  private async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]> {
    try {
      try {
        return (await this.pool.query<R>(text, values)).rows;
      } catch (e) {
        // An idle pooled connection the server ended (a restart, an idle
        // timeout, pg_terminate_backend) fails the next statement before it
        // runs, and the pool discards it. Every statement sent here is a read
        // or a cursor write that never moves back, so it is sent once more on
        // a fresh connection; a second loss is reported.
        if (!isLostConnection(e)) throw e;
        return (await this.pool.query<R>(text, values)).rows;
      }
    } catch (e) {
      throw new CoverageError(
        'TWG_COVERAGE_BACKEND',
        `coverage query failed: ${text.split('\n')[0] ?? ''}`,
        e,
      );
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw new CoverageError('TWG_COVERAGE_BACKEND', 'cannot connect to PostgreSQL', e);
    }
    // A connection killed by the server emits 'error' on its client, possibly
    // after the failed query was reported and the client released; without a
    // listener that event would crash the process. The failure itself is
    // already surfaced by the query, so the lasting listener only absorbs it.
    if (!guarded.has(client)) {
      guarded.add(client);
      client.on('error', () => undefined);
    }
    return client;
  }
}

const guarded = new WeakSet<pg.PoolClient>();

function compareKeys(a: CoverageKey, b: CoverageKey): number {
  return a.sink < b.sink
    ? -1
    : a.sink > b.sink
      ? 1
      : a.topic < b.topic
        ? -1
        : a.topic > b.topic
          ? 1
          : a.partition - b.partition;
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

function safe(value: string, key: CoverageKey): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new CoverageError(
      'TWG_COVERAGE_CORRUPT',
      `stored offset ${value} of ${key.sink}/${key.topic}/${key.partition} is beyond 2^53`,
    );
  }
  return n;
}
