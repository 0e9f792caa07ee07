import { ThalwegError } from '@thalweg/connector-core';

/**
 * What a failed PostgreSQL statement or transaction means for its caller:
 *
 * - `transient`  the connection or the transaction was lost (terminated
 *                backend, reset socket, serialization failure, deadlock):
 *                the same work may be run again on another connection;
 * - `poison`     the server refused the data itself (22xxx data exceptions,
 *                23xxx integrity violations): the same rows fail every time;
 * - `fatal`      the table or the setup is wrong (42xxx: a dropped or
 *                altered table or column) or the failure is unknown.
 *
 * One classifier for thalweg's PostgreSQL clients: the PostgreSQL sink uses
 * it to decide a transaction's fate, the coverage store to resend a read.
 */
export type PgFailure = 'transient' | 'poison' | 'fatal';

// The connection is gone; nothing about the statement itself was refused.
const LOST_STATES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
]);

const TRANSIENT_STATES = new Set([
  ...LOST_STATES,
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57014', // query_canceled (statement_timeout)
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
  if (isLostConnection(error)) return 'transient';
  const code = sqlStateOf(error);
  if (code !== undefined) {
    if (TRANSIENT_STATES.has(code) || TRANSIENT_CLASSES.has(code.slice(0, 2))) return 'transient';
    if (code.startsWith('22') || code.startsWith('23')) return 'poison';
  }
  return 'fatal';
}

/**
 * Whether the failure says the connection itself is gone (the server ended
 * the backend, the socket dropped, the client was closed) rather than that
 * the statement was refused. A pooled connection the server ended while it
 * sat idle fails the next statement this way: that statement never ran, so
 * a single-statement read may be sent once more on a fresh connection.
 */
export function isLostConnection(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || LOST_STATES.has(code) || code.startsWith('08')) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return false;
  }
  return LOST_CONNECTION.test(error.message);
}

/** The SQLSTATE of a server error (pg's DatabaseError), if it is one. */
export function sqlStateOf(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
