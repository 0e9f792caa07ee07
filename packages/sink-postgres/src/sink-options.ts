import type pg from 'pg';
import {
  functionOption,
  isSinkId,
  objectWith,
  parseConfig,
  type ConfirmTarget,
  type OffsetSpan,
  type RetryPolicy,
  type SinkId,
} from '@thalweg/connector-core';
import type { PostgresCoverage } from '@thalweg/offset-store/postgres';
import type { PostgresSinkError } from './errors.js';
import { z } from 'zod';
import type { StatementShape } from './insert-plan.js';
import { pgTableSpecSchema, type PgTableSpec } from './table-spec.js';

/** The part of a coverage store that can write inside the sink's own transaction. */
export type TransactionalCoverage = Pick<PostgresCoverage, 'recordInTransaction'>;

/**
 * What the sink does with a batch PostgreSQL refuses (22xxx, 23xxx):
 *
 * - `fail` (default): the sink fails at that batch. Batches submitted
 *   before it are committed and confirmed; it and every later batch are
 *   not, so their spans stay gaps, and flush/submit reject naming it.
 * - `skip`: the batch is reported through `onError`, left unconfirmed and
 *   handed to the confirmation target's `setAside` with reason `poison`
 *   (the pipeline quarantines its records, ADR 0025), and the sink carries
 *   on with the next batch.
 */
export type PoisonPolicy = 'fail' | 'skip';

/**
 * What the sink does with a group whose transaction failed transiently
 * through every attempt of its retry policy:
 *
 * - `set-aside` (default): the group's batches are settled unconfirmed
 *   (their spans stay gaps, which recovery replays once the server is
 *   healthy), reported through `onError` and handed to the confirmation
 *   target's `setAside` with reason `retry-exhausted`; the sink carries on
 *   with the next group. A transaction that failed does not make the pool
 *   unusable: the next one connects afresh.
 * - `fail`: the sink fails at that group, as for a fatal failure.
 */
export type RetryExhaustedPolicy = 'fail' | 'set-aside';

/** One transaction, for fault injection in tests: the rows and coverage are written, not committed. */
export interface TransactionProbe {
  readonly client: pg.ClientBase;
  /** 1 for the first try of this transaction, counting retries. */
  readonly attempt: number;
  readonly spans: readonly OffsetSpan[];
}

/** Seams for tests; production code passes none. */
export interface PostgresSinkHooks {
  /** Runs inside every transaction, after its inserts and coverage, before COMMIT; a throw fails the attempt. */
  readonly beforeCommit?: (tx: TransactionProbe) => Promise<void>;
}

export interface PostgresSinkOptions {
  readonly id: SinkId;
  /** A pool the caller owns (it needs an 'error' listener, as pg advises); or `connectionString`. */
  readonly pool?: pg.Pool;
  /** For a pool the sink creates, owns and ends on close. */
  readonly connectionString?: string;
  readonly table: PgTableSpec;
  /** Where confirmations go, after the commit, in submission order. */
  readonly confirm: ConfirmTarget<'secondary'>;
  /**
   * Coverage on the SAME database: the spans of derived-coverage batches are
   * recorded in the transaction that inserts their rows (exactly once). The
   * sink cannot check that it is the same database; another one would make
   * the commit of rows and coverage two commits.
   */
  readonly coverage?: TransactionalCoverage;
  /** Rows per INSERT statement (default 1000; `values` is also capped by 65 535 parameters). */
  readonly maxRowsPerStatement?: number;
  /** Batches accepted and not yet taken by the writer before submit waits (default 64). */
  readonly maxQueuedBatches?: number;
  /**
   * The rows' estimated heap bytes accepted and not yet taken by the writer
   * before submit waits (default 32 MiB; pg-batch.ts's `rowsHeapBytes`).
   * A batch larger than the bound is taken alone into an empty queue.
   */
  readonly maxQueuedBytes?: number;
  /** Batches committed together in one transaction (default 16). */
  readonly maxBatchesPerTransaction?: number;
  /** The insert statement's shape (default `unnest`, the faster in the bench). */
  readonly statement?: StatementShape;
  /** Transient failures: attempts per transaction and backoff (defaults 8, 50 ms, 5 s). */
  readonly retry?: Partial<RetryPolicy>;
  readonly onPoison?: PoisonPolicy;
  readonly onRetryExhausted?: RetryExhaustedPolicy;
  /** Poisoned batches, the failure that stopped the sink, confirmation targets that threw. */
  readonly onError?: (error: PostgresSinkError) => void;
  /** The start-up line with every knob, for a debug log (default: silent). */
  readonly log?: (line: string) => void;
  readonly hooks?: PostgresSinkHooks;
}

export interface ResolvedOptions {
  readonly id: SinkId;
  readonly table: PgTableSpec;
  readonly maxRowsPerStatement: number;
  readonly maxQueuedBatches: number;
  readonly maxQueuedBytes: number;
  readonly maxBatchesPerTransaction: number;
  readonly statement: StatementShape;
  readonly retry: RetryPolicy;
  readonly onPoison: PoisonPolicy;
  readonly onRetryExhausted: RetryExhaustedPolicy;
}

/** The root of every option path of this sink (the shared convention, parse-config.ts). */
const PATH = 'postgresSink';

/**
 * The queue bound of a sink opened with no `maxQueuedBytes`. Declared as a
 * topology part, the sink takes a thirty-second of the topology's memory
 * limit, at most this (postgres-part.ts).
 */
export const DEFAULT_QUEUED_BYTES = 32 * 1024 * 1024;

const int = (min: number, max: number, fallback: number) =>
  z.number().int().min(min).max(max).default(fallback);
/**
 * The options, validated once at construction: strict, so a misspelt knob
 * (`maxQueuedBatchez`) is refused naming it rather than left at its default.
 */
const postgresSinkOptionsSchema = z
  .strictObject({
    id: z.custom<SinkId>(isSinkId, 'must be a SinkId (see sinkId())'),
    pool: z
      .custom<pg.Pool>((v) => typeof v === 'object' && v !== null, 'must be a pg.Pool')
      .optional(),
    connectionString: z.string().min(1, 'must be a non-empty string').optional(),
    table: pgTableSpecSchema,
    confirm: objectWith<ConfirmTarget<'secondary'>>('apply'),
    coverage: objectWith<TransactionalCoverage>('recordInTransaction').optional(),
    maxRowsPerStatement: int(1, 1_000_000, 1000),
    maxQueuedBatches: int(1, 65_536, 64),
    maxQueuedBytes: int(1, Number.MAX_SAFE_INTEGER, DEFAULT_QUEUED_BYTES),
    maxBatchesPerTransaction: int(1, 4096, 16),
    statement: z.enum(['unnest', 'values']).default('unnest'),
    retry: z
      .strictObject({
        maxAttempts: int(1, 1000, 8),
        // Node timers overflow above 2^31 - 1 ms (they would fire after 1 ms).
        baseDelayMs: int(0, 0x7fffffff, 50),
        maxDelayMs: int(0, 0x7fffffff, 5_000),
      })
      .prefault({}),
    onPoison: z.enum(['fail', 'skip']).default('fail'),
    onRetryExhausted: z.enum(['fail', 'set-aside']).default('set-aside'),
    onError: functionOption<(error: PostgresSinkError) => void>().optional(),
    log: functionOption<(line: string) => void>().optional(),
    hooks: z
      .strictObject({
        beforeCommit: functionOption<(tx: TransactionProbe) => Promise<void>>().optional(),
      })
      .optional(),
  })
  .superRefine((o, ctx) => {
    if ((o.pool === undefined) === (o.connectionString === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [o.pool === undefined ? 'pool' : 'connectionString'],
        message: 'give exactly one of pool and connectionString',
      });
    }
    if (o.retry.maxDelayMs < o.retry.baseDelayMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['retry', 'maxDelayMs'],
        message: 'must not be below retry.baseDelayMs',
      });
    }
  });

/** Validates the options once, at construction; a refusal names the field (`postgresSink.table.name`). */
export function resolveOptions(options: PostgresSinkOptions): ResolvedOptions {
  const o = parseConfig(postgresSinkOptionsSchema, options, PATH);
  return {
    id: o.id,
    // The spec as given, now checked (its optional schema stays absent, not undefined).
    table: options.table,
    maxRowsPerStatement: o.maxRowsPerStatement,
    maxQueuedBatches: o.maxQueuedBatches,
    maxQueuedBytes: o.maxQueuedBytes,
    maxBatchesPerTransaction: o.maxBatchesPerTransaction,
    statement: o.statement,
    retry: o.retry,
    onPoison: o.onPoison,
    onRetryExhausted: o.onRetryExhausted,
  };
}

/** One line per knob, for the start-up log. */
export function describeOptions(o: ResolvedOptions, table: string): string {
  return [
    `table=${table}`,
    `columns=${o.table.columns.length}`,
    `statement=${o.statement}`,
    `maxRowsPerStatement=${o.maxRowsPerStatement}`,
    `maxQueuedBatches=${o.maxQueuedBatches}`,
    `maxQueuedBytes=${o.maxQueuedBytes}`,
    `maxBatchesPerTransaction=${o.maxBatchesPerTransaction}`,
    `retry.maxAttempts=${o.retry.maxAttempts}`,
    `retry.baseDelayMs=${o.retry.baseDelayMs}`,
    `retry.maxDelayMs=${o.retry.maxDelayMs}`,
    `onPoison=${o.onPoison}`,
    `onRetryExhausted=${o.onRetryExhausted}`,
  ].join(' ');
}
