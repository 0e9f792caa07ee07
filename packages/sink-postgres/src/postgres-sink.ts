import pg from 'pg';
import {
  AckLane,
  type BurstContext,
  type Confirm,
  type DurableGuarantee,
  type LaneMetrics,
  type OffsetSpan,
  type SetAside,
  type Sink,
  type SinkDescriptor,
} from '@thalweg/connector-core';
import { ensureTable } from './ensure-table.js';
import { PostgresSinkError } from './errors.js';
import { InsertPlanner } from './insert-plan.js';
import { checkSubmission, rowsHeapBytes, type PgBatch } from './pg-batch.js';
import type { QueuedBatch } from './queued-batch.js';
import {
  describeOptions,
  resolveOptions,
  type PostgresSinkOptions,
  type ResolvedOptions,
} from './sink-options.js';
import { SinkCounters, type PostgresSinkStats } from './sink-stats.js';
import { qualifiedName } from './table-spec.js';
import { TransactionWriter } from './transaction-writer.js';

/** One transaction at a time through one lane: its stream in telemetry. */
const PG_STREAM = '0';

/** The descriptor every Postgres sink has: durable at commit, not readable back for recovery. */
export type PostgresSinkDescriptor = SinkDescriptor<DurableGuarantee> & {
  readonly durability: { readonly kind: 'transaction-commit' };
  readonly recovery: { readonly kind: 'write-only' };
};

/**
 * A secondary sink writing rows to one PostgreSQL table, exactly once.
 *
 * `submit` checks the batch and queues it on the sink's ack lane (a full
 * lane makes it wait: the backpressure). The lane takes queued batches,
 * several at a time, and this sink's durable step commits each group in ONE
 * transaction holding their rows (deduplicated on `_twg_record_id`) and,
 * with `coverage`, their coverage. Only after COMMIT does the lane apply
 * each batch's confirmation, in submission order, with durability
 * `transaction-commit`, while the next group commits, at most one behind.
 *
 * Nothing is confirmed that did not commit. A batch PostgreSQL refuses
 * (`onPoison: 'skip'`) or a group whose retries ran out
 * (`onRetryExhausted: 'set-aside'`, the default) is set aside: settled in
 * its place, unconfirmed, and handed to the target's `setAside` with its
 * reason. Any other failure the sink cannot get past leaves it FAILED: what
 * committed before is confirmed, nothing after, and flush, close and submit
 * reject with the error naming table and span.
 */
export class PostgresSink implements Sink<'secondary', PgBatch> {
  readonly descriptor: PostgresSinkDescriptor;
  /** The quoted, schema-qualified table. */
  readonly table: string;
  readonly options: ResolvedOptions;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly onError: (error: PostgresSinkError) => void;
  private readonly writer: TransactionWriter;
  private readonly counters = new SinkCounters();
  private readonly lane: AckLane<number, 'secondary', QueuedBatch>;
  private readonly loop: Promise<void>;
  private nextSeq = 0;
  private failure: PostgresSinkError | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(options: PostgresSinkOptions) {
    this.options = resolveOptions(options);
    const { id } = this.options;
    this.table = qualifiedName(this.options.table);
    this.descriptor = {
      id,
      kind: 'postgres',
      durability: { kind: 'transaction-commit' },
      recovery: { kind: 'write-only' },
    };
    this.onError =
      options.onError ?? ((e) => console.error(`thalweg sink-postgres ${id}: ${e.message}`));
    (options.log ?? (() => undefined))(
      `thalweg sink-postgres ${id}: ${describeOptions(this.options, this.table)}`,
    );
    if (options.pool !== undefined) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      this.pool = new pg.Pool({
        connectionString: options.connectionString,
        // The writer holds one connection at a time; the other serves ensureTable.
        max: 2,
        application_name: `thalweg-sink-postgres/${id}`.slice(0, 63),
      });
      // An idle pooled connection the server kills emits 'error' on the pool;
      // the pool drops it and the next transaction connects afresh.
      this.pool.on('error', () => undefined);
      this.ownsPool = true;
    }
    this.lane = new AckLane<number, 'secondary', QueuedBatch>({
      sink: id,
      stream: PG_STREAM,
      durability: 'transaction-commit',
      target: options.confirm,
      queue: { maxItems: this.options.maxQueuedBatches, maxBytes: this.options.maxQueuedBytes },
      burst: { maxItems: this.options.maxBatchesPerTransaction },
      onConfirmFailure: (e, queued) =>
        this.report(
          new PostgresSinkError(
            'TWG_PG_SINK_CONFIRM_FAILED',
            { table: this.table, span: queued.span },
            `committed, but the confirmation target failed (coverage lags; a replay will repair it): ${e instanceof Error ? e.message : String(e)}`,
            e,
          ),
        ),
    });
    this.writer = new TransactionWriter({
      sink: id,
      table: this.table,
      pool: this.pool,
      planner: new InsertPlanner(
        this.options.table,
        this.options.statement,
        this.options.maxRowsPerStatement,
      ),
      coverage: options.coverage,
      retry: this.options.retry,
      hooks: options.hooks,
      retries: this.lane.metrics.retries,
    });
    // The failure is kept (and reported) by the step; the lane has torn down.
    this.loop = this.lane.run((group, ctx) => this.commit(group, ctx)).catch(() => undefined);
  }

  /** Builds the sink and runs `ensureTable`; a sink whose table is refused is closed again. */
  static async open(options: PostgresSinkOptions): Promise<PostgresSink> {
    const sink = new PostgresSink(options);
    try {
      await sink.ensureTable();
    } catch (e) {
      await sink.close().catch(() => undefined);
      throw e;
    }
    return sink;
  }

  /** Creates the table if missing; refuses an existing one that does not match, naming the column. */
  async ensureTable(): Promise<void> {
    try {
      await ensureTable(this.pool, this.options.table);
    } catch (e) {
      if (e instanceof PostgresSinkError) throw e;
      throw new PostgresSinkError(
        'TWG_PG_SINK_FATAL',
        { table: this.table },
        `cannot prepare the table: ${e instanceof Error ? e.message : String(e)}`,
        e,
      );
    }
  }

  /** Resolves once the batch is queued (not committed); rejects a malformed batch, changing nothing. */
  async submit(batch: PgBatch, span: OffsetSpan, confirm: Confirm<'secondary'>): Promise<void> {
    if (this.closed) {
      throw new PostgresSinkError(
        'TWG_PG_SINK_CLOSED',
        { table: this.table },
        `sink "${this.options.id}" is closed`,
      );
    }
    if (this.failure !== null) throw this.failure;
    checkSubmission(
      batch,
      span,
      confirm,
      this.options.id,
      this.options.table.columns.length,
      this.table,
    );
    // The seq is taken and the push made in the same turn, and the lane is
    // FIFO: commits and confirmations follow the order submit was called in.
    const position = this.nextSeq++;
    await this.lane.submit({
      position,
      batch,
      span,
      confirm,
      records: batch.rows.length,
      bytes: rowsHeapBytes(batch.rows),
      submittedAt: Date.now(),
    });
  }

  /** Resolves once every batch submitted before the call is committed and confirmed. */
  flush(): Promise<void> {
    return this.lane.flush();
  }

  /** Flushes, stops the writer and ends the pool if the sink created it. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      let failure: Error | null = null;
      try {
        await this.lane.flush();
      } catch (e) {
        failure = e instanceof Error ? e : new Error(String(e));
      }
      this.lane.end();
      await this.loop;
      if (this.ownsPool) await this.pool.end();
      if (failure !== null) throw failure;
    })();
    return this.closing;
  }

  stats(): PostgresSinkStats {
    return this.counters.snapshot(this.lane.size.items, this.lane.metrics);
  }

  /** The sink's one ack lane (stream `0`), its metrics live across scrapes. */
  lanes(): readonly LaneMetrics[] {
    return [{ stream: PG_STREAM, metrics: this.lane.metrics }];
  }

  /** The failure that stopped the sink, or null while it is healthy. */
  get failed(): PostgresSinkError | null {
    return this.failure;
  }

  /**
   * The durable step: commits one group, each committed before the lane
   * takes the next. A failure it cannot get past fails the sink (and ends
   * the lane); nothing of the group after what committed is confirmed.
   */
  private async commit(
    group: readonly QueuedBatch[],
    ctx: BurstContext<number, QueuedBatch>,
  ): Promise<void> {
    let failure: PostgresSinkError | null;
    try {
      failure = await this.writeGroup(group, ctx);
    } catch (e) {
      // Not a database failure (those come back as outcomes): a defect.
      // Stop rather than guess; nothing of the group was confirmed.
      const span = group[0]?.span;
      failure = new PostgresSinkError(
        'TWG_PG_SINK_FATAL',
        { table: this.table, ...(span === undefined ? {} : { span }) },
        `the writer failed unexpectedly: ${e instanceof Error ? e.message : String(e)}`,
        e,
      );
    }
    if (failure !== null) {
      this.fail(failure);
      throw failure;
    }
  }

  /**
   * Commits a group, or, when PostgreSQL refuses data somewhere in a group
   * of several batches, each batch on its own, in order: that tells which
   * batch is poison, and commits every good batch before it.
   */
  private async writeGroup(
    group: readonly QueuedBatch[],
    ctx: BurstContext<number, QueuedBatch>,
  ): Promise<PostgresSinkError | null> {
    const outcome = await this.writer.write(group);
    if (outcome.kind === 'committed') {
      const rows = group.reduce((n, q) => n + q.batch.rows.length, 0);
      this.counters.transactions.inc();
      this.counters.batches.inc(group.length);
      this.counters.inserted.inc(outcome.inserted);
      this.counters.duplicates.inc(rows - outcome.inserted);
      this.counters.batchesPerTransaction.observe(group.length);
      await ctx.settle(
        group.map((entry, i) => ({
          entry,
          bytes: outcome.bytes[i] ?? 0,
          at: outcome.committedAt,
        })),
      );
      return null;
    }
    if (outcome.failure === 'poison' && group.length > 1) {
      for (const queued of group) {
        const failure = await this.writeGroup([queued], ctx);
        if (failure !== null) return failure;
      }
      return null;
    }
    const error = this.writer.describe(outcome, group);
    if (outcome.failure === 'poison') {
      this.counters.poisoned.inc();
      if (this.options.onPoison === 'fail') return error;
      return this.setAside(group, ctx, 'poison', error);
    }
    if (outcome.failure === 'transient' && this.options.onRetryExhausted === 'set-aside') {
      this.counters.retriesExhausted.inc(group.length);
      return this.setAside(group, ctx, 'retry-exhausted', error);
    }
    return error;
  }

  /**
   * Settles the group without a confirmation, in its place in the order
   * (its spans stay gaps), tells the target why, and carries on.
   */
  private async setAside(
    group: readonly QueuedBatch[],
    ctx: BurstContext<number, QueuedBatch>,
    reason: SetAside['reason'],
    error: PostgresSinkError,
  ): Promise<null> {
    this.report(error);
    const refusal: SetAside = { reason, error };
    await ctx.settle(group.map((entry) => ({ entry, kind: 'set-aside' as const, refusal })));
    return null;
  }

  private fail(error: PostgresSinkError): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.report(error);
  }

  private report(error: PostgresSinkError): void {
    try {
      this.onError(error);
    } catch {
      // A throwing observer (a logger) must not stop the writer or the lane.
    }
  }
}
