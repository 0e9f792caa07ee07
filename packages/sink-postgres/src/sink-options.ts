import type pg from 'pg';
import {
  ConfigError,
  isSinkId,
  type ConfirmTarget,
  type OffsetSpan,
  type SinkId,
} from '@thalweg/connector-core';
import type { PostgresCoverage } from '@thalweg/offset-store';
import type { RetryPolicy } from './backoff.js';
import type { PostgresSinkError } from './errors.js';
import { shown } from './shown-value.js';
import type { StatementShape } from './insert-plan.js';
import { checkTableSpec, type PgTableSpec } from './table-spec.js';

/** The part of a coverage store that can write inside the sink's own transaction. */
export type TransactionalCoverage = Pick<PostgresCoverage, 'recordInTransaction'>;

/**
 * What the sink does with a batch PostgreSQL refuses (22xxx, 23xxx):
 *
 * - `fail` (default): the sink fails at that batch. Batches submitted
 *   before it are committed and confirmed; it and every later batch are
 *   not, so their spans stay gaps, and flush/submit reject naming it.
 * - `skip`: the batch is reported through `onError` and left unconfirmed
 *   (a gap in coverage), and the sink carries on with the next batch.
 *   Recovery replaying that gap meets the same refusal: route it to
 *   quarantine from `onError`.
 */
export type PoisonPolicy = 'fail' | 'skip';

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
  /** Batches committed together in one transaction (default 16). */
  readonly maxBatchesPerTransaction?: number;
  /** The insert statement's shape (default `unnest`, the faster in the bench). */
  readonly statement?: StatementShape;
  /** Transient failures: attempts per transaction and backoff (defaults 8, 50 ms, 5 s). */
  readonly retry?: Partial<RetryPolicy>;
  readonly onPoison?: PoisonPolicy;
  /** Poisoned batches, the failure that stopped the sink, confirmation targets that threw. */
  readonly onError?: (error: PostgresSinkError) => void;
  /** The start-up line with every knob (default console.info). */
  readonly log?: (line: string) => void;
  readonly hooks?: PostgresSinkHooks;
}

export interface ResolvedOptions {
  readonly id: SinkId;
  readonly table: PgTableSpec;
  readonly maxRowsPerStatement: number;
  readonly maxQueuedBatches: number;
  readonly maxBatchesPerTransaction: number;
  readonly statement: StatementShape;
  readonly retry: RetryPolicy;
  readonly onPoison: PoisonPolicy;
}

const PATH = 'postgresSink';

/** Validates the options once, at construction; a refusal names the field. */
export function resolveOptions(options: PostgresSinkOptions): ResolvedOptions {
  // JavaScript callers bypass the types.
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new ConfigError(PATH, 'must be an object');
  if (!isSinkId(options.id)) throw new ConfigError(`${PATH}.id`, 'must be a SinkId (see sinkId())');
  const hasPool = options.pool !== undefined;
  const hasUrl = options.connectionString !== undefined;
  if (hasPool === hasUrl) {
    throw new ConfigError(
      hasPool ? `${PATH}.connectionString` : `${PATH}.pool`,
      'give exactly one of pool and connectionString',
    );
  }
  if (hasUrl && (typeof options.connectionString !== 'string' || options.connectionString === '')) {
    throw new ConfigError(`${PATH}.connectionString`, 'must be a non-empty string');
  }
  checkFunction(options.confirm, 'apply', `${PATH}.confirm`);
  if (options.coverage !== undefined) {
    checkFunction(options.coverage, 'recordInTransaction', `${PATH}.coverage`);
  }
  const statement = oneOf(options.statement, ['unnest', 'values'] as const, 'statement');
  const onPoison = oneOf(options.onPoison, ['fail', 'skip'] as const, 'onPoison');
  for (const f of ['onError', 'log'] as const) {
    if (options[f] !== undefined && typeof options[f] !== 'function') {
      throw new ConfigError(`${PATH}.${f}`, 'must be a function');
    }
  }
  const retry = options.retry ?? {};
  const resolved: ResolvedOptions = {
    id: options.id,
    table: checkTableSpec(options.table, `${PATH}.table`),
    maxRowsPerStatement: int(
      options.maxRowsPerStatement,
      1000,
      1,
      1_000_000,
      'maxRowsPerStatement',
    ),
    maxQueuedBatches: int(options.maxQueuedBatches, 64, 1, 65_536, 'maxQueuedBatches'),
    maxBatchesPerTransaction: int(
      options.maxBatchesPerTransaction,
      16,
      1,
      4096,
      'maxBatchesPerTransaction',
    ),
    statement,
    retry: {
      maxAttempts: int(retry.maxAttempts, 8, 1, 1000, 'retry.maxAttempts'),
      // Node timers overflow above 2^31 - 1 ms (they would fire after 1 ms).
      baseDelayMs: int(retry.baseDelayMs, 50, 0, 0x7fffffff, 'retry.baseDelayMs'),
      maxDelayMs: int(retry.maxDelayMs, 5_000, 0, 0x7fffffff, 'retry.maxDelayMs'),
    },
    onPoison,
  };
  if (resolved.retry.maxDelayMs < resolved.retry.baseDelayMs) {
    throw new ConfigError(`${PATH}.retry.maxDelayMs`, 'must not be below retry.baseDelayMs');
  }
  return resolved;
}

/** One line per knob, for the start-up log. */
export function describeOptions(o: ResolvedOptions, table: string): string {
  return [
    `table=${table}`,
    `columns=${o.table.columns.length}`,
    `statement=${o.statement}`,
    `maxRowsPerStatement=${o.maxRowsPerStatement}`,
    `maxQueuedBatches=${o.maxQueuedBatches}`,
    `maxBatchesPerTransaction=${o.maxBatchesPerTransaction}`,
    `retry.maxAttempts=${o.retry.maxAttempts}`,
    `retry.baseDelayMs=${o.retry.baseDelayMs}`,
    `retry.maxDelayMs=${o.retry.maxDelayMs}`,
    `onPoison=${o.onPoison}`,
  ].join(' ');
}

function int(value: unknown, fallback: number, min: number, max: number, field: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(
      `${PATH}.${field}`,
      `${shown(value)} is not an integer in [${min}, ${max}]`,
    );
  }
  return value;
}

/** The first choice is the default. */
function oneOf<const C extends readonly [string, ...string[]]>(
  value: unknown,
  choices: C,
  field: string,
): C[number] {
  if (value === undefined) return choices[0];
  if (typeof value === 'string' && choices.includes(value)) return value;
  throw new ConfigError(`${PATH}.${field}`, `${shown(value)} is not one of ${choices.join(', ')}`);
}

function checkFunction(target: unknown, method: string, path: string): void {
  if (
    typeof target !== 'object' ||
    target === null ||
    typeof (target as Record<string, unknown>)[method] !== 'function'
  ) {
    throw new ConfigError(path, `must be an object with a ${method}() method`);
  }
}
