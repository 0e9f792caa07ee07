import { classifyZerobusError, type ErrorSite } from '../classify-error.js';
import { ZerobusSinkError } from '../errors.js';

// What the binding says when a call meets a stream that already failed or
// that we closed: a consequence, never the cause. "Arrow stream has been
// closed" comes from the binding's own wrapper after close().
const SECONDARY = /stream is closing or closed|stream has been closed|stream sender is closed/i;

/** The binding's message ("GenericFailure" errors carry nothing else). */
export function sdkMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True when the error only says the stream is gone; the root cause is elsewhere. */
export function isSecondaryClosure(error: unknown): boolean {
  return SECONDARY.test(sdkMessage(error));
}

// The binding renders a gRPC status by tonic's description of its code, and
// a refusal of the token endpoint by its HTTP status; the shared classifier
// matches status names. So the name is appended before classifying.
const STATUS_BY_DESCRIPTION: readonly (readonly [string, string])[] = [
  ['The operation was cancelled', 'cancelled'],
  ['Client specified an invalid argument', 'invalid argument'],
  ['Deadline expired before operation could complete', 'deadline exceeded'],
  ['Some requested entity was not found', 'not found'],
  ['The caller does not have permission', 'permission denied'],
  ['Some resource has been exhausted', 'resource exhausted'],
  ['The operation was aborted', 'aborted'],
  ['Operation was attempted past the valid range', 'out of range'],
  ['Operation is not implemented or not supported', 'unimplemented'],
  ['The service is currently unavailable', 'unavailable'],
  ['The request does not have valid authentication credentials', 'unauthenticated'],
];
const STATUS_BY_HTTP: Readonly<Record<string, string>> = {
  '400': 'invalid argument',
  '401': 'unauthenticated',
  '403': 'permission denied',
  '404': 'not found',
};

/** The binding's message with the status it encodes named, e.g. `… [status: unauthenticated]`. */
export function withStatusName(message: string): string {
  const described = STATUS_BY_DESCRIPTION.find(([text]) => message.includes(text))?.[1];
  const http = /client error \((\d{3})\)/i.exec(message)?.[1];
  const name = described ?? (http === undefined ? undefined : STATUS_BY_HTTP[http]);
  return name === undefined ? message : `${message} [status: ${name}]`;
}

/** A binding error, classified where it surfaced, with the table named. */
export function sdkFailure(error: unknown, site: ErrorSite, table: string): ZerobusSinkError {
  const message = withStatusName(sdkMessage(error));
  const failure = classifyZerobusError(new Error(message), site);
  return new ZerobusSinkError(failure, `${table}: ${site} failed: ${message}`, error);
}
