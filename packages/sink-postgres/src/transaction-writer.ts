import type pg from 'pg';
import {
  formatSpan,
  retrying,
  type Counter,
  type OffsetSpan,
  type RetryPolicy,
  type SinkId,
} from '@thalweg/connector-core';
import {
  classifyPgError,
  refusedColumn,
  refusedParameter,
  sqlStateOf,
  type PgFailure,
} from './classify-error.js';
import { PostgresSinkError } from './errors.js';
import type { InsertChunk, InsertPlanner } from './insert-plan.js';
import type { QueuedBatch } from './queued-batch.js';
import type { PostgresSinkHooks, TransactionalCoverage } from './sink-options.js';

export type GroupOutcome =
  | {
      readonly kind: 'committed';
      readonly inserted: number;
      /** Encoded bytes per batch of the group, for the receipts. */
      readonly bytes: readonly number[];
      readonly committedAt: number;
    }
  | {
      readonly kind: 'failed';
      readonly failure: PgFailure;
      readonly error: unknown;
      /** The statement that failed, when it was an insert. */
      readonly chunk: InsertChunk | null;
      readonly attempts: number;
    };

export interface WriterDeps {
  readonly sink: SinkId;
  /** The quoted, schema-qualified table, for messages. */
  readonly table: string;
  readonly pool: pg.Pool;
  readonly planner: InsertPlanner;
  readonly coverage: TransactionalCoverage | undefined;
  readonly retry: RetryPolicy;
  readonly hooks: PostgresSinkHooks | undefined;
  /** The ack lane's retry counter: transactions run again after a transient failure. */
  readonly retries: Counter;
}

/** An insert that failed, with the statement it ran, so a refused parameter can be located. */
class StatementFailure extends Error {
  constructor(
    readonly chunk: InsertChunk,
    override readonly cause: unknown,
  ) {
    super('an insert statement failed', { cause });
  }
}

/**
 * Writes a group of batches as ONE transaction: their rows (`ON CONFLICT
 * (_twg_record_id) DO NOTHING`), then, with a coverage store, the spans of
 * their derived-coverage confirmations, then COMMIT. Rows and coverage
 * commit together or not at all, which is what makes this sink exactly-once
 * for its table.
 *
 * A transient failure rolls back, drops the connection, and runs the SAME
 * transaction again on a fresh one, within the retry budget. That is safe
 * even when the failure hid a successful COMMIT (the reply was lost): the
 * retry inserts nothing new (the rows are duplicates now) and coverage
 * merges by union.
 */
export class TransactionWriter {
  constructor(private readonly deps: WriterDeps) {}

  async write(group: readonly QueuedBatch[]): Promise<GroupOutcome> {
    // Encoded once, before BEGIN: the transaction stays short, retries reuse it.
    const plan = this.deps.planner.plan(group.map((q) => q.batch));
    let attempts = 0;
    try {
      const inserted = await retrying(
        this.deps.retry,
        (attempt) => {
          attempts = attempt;
          return this.attempt(group, plan.chunks, attempt);
        },
        {
          transient: (e) => classifyPgError(causeOf(e)) === 'transient',
          onRetry: () => this.deps.retries.inc(),
        },
      );
      return { kind: 'committed', inserted, bytes: plan.bytes, committedAt: Date.now() };
    } catch (e) {
      const cause = causeOf(e);
      const chunk = e instanceof StatementFailure ? e.chunk : null;
      return { kind: 'failed', failure: classifyPgError(cause), error: cause, chunk, attempts };
    }
  }

  /** The error that names the table, the span and (when the server told) the column and row. */
  describe(
    outcome: Extract<GroupOutcome, { kind: 'failed' }>,
    group: readonly QueuedBatch[],
  ): PostgresSinkError {
    const { table } = this.deps;
    const cause = outcome.error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    const sqlState = sqlStateOf(cause);
    const state = sqlState === undefined ? '' : ` (SQLSTATE ${sqlState})`;
    const first = group[0]?.span;
    const spans = describeSpans(group);
    if (outcome.failure === 'poison') {
      const parameter = refusedParameter(cause);
      const located =
        parameter === null || outcome.chunk === null
          ? null
          : this.deps.planner.locate(outcome.chunk, parameter);
      const column = refusedColumn(cause) ?? located?.column;
      const span = group[located?.batch ?? 0]?.span ?? first;
      const where =
        (column === undefined ? '' : `column "${column}"`) +
        (located?.row === undefined ? '' : `, row ${located.row}`);
      return new PostgresSinkError(
        'TWG_PG_SINK_POISON',
        {
          table,
          ...(span === undefined ? {} : { span }),
          ...(column === undefined ? {} : { column }),
          ...(located?.row === undefined ? {} : { row: located.row }),
          ...(sqlState === undefined ? {} : { sqlState }),
        },
        `PostgreSQL refused the batch${where === '' ? '' : ` at ${where}`}: ${reason}${state}; it was not confirmed`,
        cause,
      );
    }
    const context = {
      table,
      ...(first === undefined ? {} : { span: first }),
      ...(sqlState === undefined ? {} : { sqlState }),
    };
    if (outcome.failure === 'transient') {
      return new PostgresSinkError(
        'TWG_PG_SINK_RETRIES_EXHAUSTED',
        context,
        `the transaction of ${spans} failed ${outcome.attempts} times, last with: ${reason}${state}; nothing of it was confirmed`,
        cause,
      );
    }
    return new PostgresSinkError(
      'TWG_PG_SINK_FATAL',
      context,
      `the transaction of ${spans} failed and cannot be retried: ${reason}${state}; nothing of it was confirmed`,
      cause,
    );
  }

  private async attempt(
    group: readonly QueuedBatch[],
    chunks: readonly InsertChunk[],
    attempt: number,
  ): Promise<number> {
    const client = await this.connect();
    let failed = false;
    try {
      await client.query('begin');
      let inserted = 0;
      for (const chunk of chunks) {
        try {
          inserted += (await client.query(chunk.query)).rowCount ?? 0;
        } catch (e) {
          throw new StatementFailure(chunk, e);
        }
      }
      const covered = coveredSpans(group);
      if (this.deps.coverage !== undefined && covered.length > 0) {
        await this.deps.coverage.recordInTransaction(client, this.deps.sink, covered);
      }
      await this.deps.hooks?.beforeCommit?.({
        client,
        attempt,
        spans: group.map((q) => q.span),
      });
      await client.query('commit');
      return inserted;
    } catch (e) {
      failed = true;
      // On a lost connection this fails at once (the client is not queryable).
      await client.query('rollback').catch(() => undefined);
      throw e;
    } finally {
      // After any failure the connection is destroyed, not pooled: it may be
      // one the server killed, which must not serve the retry.
      client.release(failed);
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    const client = await this.deps.pool.connect();
    // A connection killed by the server emits 'error' on its client, possibly
    // after the failed query was reported; without a listener that event
    // would crash the process. The failure itself surfaces through the query.
    if (!guarded.has(client)) {
      guarded.add(client);
      client.on('error', () => undefined);
    }
    return client;
  }
}

const guarded = new WeakSet<pg.PoolClient>();

/** What PostgreSQL (or the socket) said, behind the statement that met it. */
function causeOf(e: unknown): unknown {
  return e instanceof StatementFailure ? e.cause : e;
}

/**
 * Only derived-coverage confirmations become coverage: a `none` confirmation
 * (a quarantine write, a probe) claims nothing about the span.
 */
function coveredSpans(group: readonly QueuedBatch[]): OffsetSpan[] {
  return group.filter((q) => q.confirm.kind === 'derived-coverage').map((q) => q.span);
}

function describeSpans(group: readonly QueuedBatch[]): string {
  const first = group[0];
  if (first === undefined) return 'no batch';
  const at = formatSpan(first.span);
  return group.length === 1 ? `1 batch (${at})` : `${group.length} batches (from ${at})`;
}
