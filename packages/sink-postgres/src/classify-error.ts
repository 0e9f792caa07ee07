import { ThalwegError } from '@thalweg/connector-core';

/**
 * What a failure of one transaction means for the batches in it:
 *
 * - `transient`  the connection or the transaction was lost (terminated
 *                backend, reset socket, serialization failure, deadlock):
 *                roll back, reconnect and run the same transaction again —
 *                safe because every insert is `ON CONFLICT DO NOTHING` and
 *                coverage merges by union;
 * - `poison`     the server refused the data itself (22xxx data exceptions,
 *                23xxx integrity violations): the same rows fail every time;
 * - `fatal`      the table or the setup is wrong (42xxx: a dropped or
 *                altered table or column, a coverage store that does not
 *                know the sink) or the failure is unknown: every batch
 *                would fail, so the sink stops, whatever `onPoison` says.
 */
export type PgFailure = 'transient' | 'poison' | 'fatal';

const TRANSIENT_STATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57014', // query_canceled (statement_timeout)
  '57P01', // admin_shutdown (pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
]);

const TRANSIENT_CLASSES = new Set([
  '08', // connection_exception: 08000, 08003, 08006, ...
  '53', // insufficient_resources: too many connections, disk full, out of memory
  '58', // system_error: I/O errors on the server
]);

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

// node-postgres reports a dropped connection with these messages and no code.
const LOST_CONNECTION =
  /connection terminated|connection error|not queryable|client was closed|timeout exceeded when trying to connect|connection timeout/i;

export function classifyPgError(error: unknown): PgFailure {
  if (error instanceof ThalwegError) return error.canRetry ? 'transient' : 'fatal';
  const code = sqlStateOf(error) ?? systemCodeOf(error);
  if (code !== undefined) {
    if (NETWORK_CODES.has(code)) return 'transient';
    if (/^[0-9A-Z]{5}$/.test(code)) {
      if (TRANSIENT_STATES.has(code) || TRANSIENT_CLASSES.has(code.slice(0, 2))) return 'transient';
      if (code.startsWith('22') || code.startsWith('23')) return 'poison';
      return 'fatal';
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return LOST_CONNECTION.test(message) ? 'transient' : 'fatal';
}

/** The SQLSTATE of a server error (pg's DatabaseError), if it is one. */
export function sqlStateOf(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function systemCodeOf(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The bind parameter the server refused, from the context it reports
 * ("unnamed portal parameter $3 = '...'"), so the column can be named.
 */
export function refusedParameter(error: unknown): number | null {
  if (!(error instanceof Error)) return null;
  const where = (error as { where?: unknown }).where;
  if (typeof where !== 'string') return null;
  const m = /portal parameter \$(\d+)/.exec(where);
  return m?.[1] === undefined ? null : Number(m[1]);
}

/** The column a constraint violation names (23502 not_null_violation carries it). */
export function refusedColumn(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const column = (error as { column?: unknown }).column;
  return typeof column === 'string' && column.length > 0 ? column : null;
}
