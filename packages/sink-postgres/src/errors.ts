import {
  formatSpan,
  ThalwegError,
  type ErrorClass,
  type OffsetSpan,
} from '@thalweg/connector-core';

export const POSTGRES_SINK_ERROR_CODES = [
  /** A submitted batch is malformed (record id, row width, span, confirmation). */
  'TWG_PG_SINK_BATCH_INVALID',
  /** An existing table does not match the table spec. */
  'TWG_PG_SINK_TABLE_MISMATCH',
  /** PostgreSQL refused a batch's data (22xxx, 23xxx): retrying cannot help. */
  'TWG_PG_SINK_POISON',
  /** Transient failures outlasted the retry budget. */
  'TWG_PG_SINK_RETRIES_EXHAUSTED',
  /** A failure no retry can fix: schema (42xxx), coverage store, unknown. */
  'TWG_PG_SINK_FATAL',
  /** A confirmation target threw after the commit: coverage lags (a replay later). */
  'TWG_PG_SINK_CONFIRM_FAILED',
  /** The sink was used after close. */
  'TWG_PG_SINK_CLOSED',
] as const;

export type PostgresSinkErrorCode = (typeof POSTGRES_SINK_ERROR_CODES)[number];

const CLASS_OF: Record<PostgresSinkErrorCode, ErrorClass> = {
  TWG_PG_SINK_BATCH_INVALID: 'poison',
  TWG_PG_SINK_TABLE_MISMATCH: 'fatal-config',
  TWG_PG_SINK_POISON: 'poison',
  // The caller's move is to build a new sink and replay what was not
  // confirmed: a rebuild, which is what the poison class means.
  TWG_PG_SINK_RETRIES_EXHAUSTED: 'poison',
  TWG_PG_SINK_FATAL: 'fatal-config',
  TWG_PG_SINK_CONFIRM_FAILED: 'transient',
  TWG_PG_SINK_CLOSED: 'fatal-config',
};

/** Where in the table and the stream a failure is. */
export interface PostgresSinkErrorContext {
  /** The quoted, schema-qualified table. */
  readonly table: string;
  /** The first batch the failure concerns. */
  readonly span?: OffsetSpan;
  /** The column PostgreSQL refused, when it could be told. */
  readonly column?: string;
  /** The row within the batch, when it could be told. */
  readonly row?: number;
  /** The PostgreSQL SQLSTATE of the cause, when there is one. */
  readonly sqlState?: string;
}

/**
 * Every failure of the Postgres sink, naming the table and, when it is
 * about a batch, that batch's span (and the column and row when known).
 */
export class PostgresSinkError extends ThalwegError<PostgresSinkErrorCode> {
  readonly table: string;
  readonly span: OffsetSpan | undefined;
  readonly column: string | undefined;
  readonly row: number | undefined;
  readonly sqlState: string | undefined;

  constructor(
    code: PostgresSinkErrorCode,
    context: PostgresSinkErrorContext,
    message: string,
    cause?: unknown,
  ) {
    const at = context.span === undefined ? '' : ` at ${formatSpan(context.span)}`;
    super({
      code,
      errorClass: CLASS_OF[code],
      message: `table ${context.table}${at}: ${message}`,
      cause,
      // A malformed batch is refused at submit, changing nothing: the sink
      // takes the next one (the caller sets this one aside).
      scope: code === 'TWG_PG_SINK_BATCH_INVALID' ? 'batch' : 'sink',
    });
    this.table = context.table;
    this.span = context.span;
    this.column = context.column;
    this.row = context.row;
    this.sqlState = context.sqlState;
  }
}
