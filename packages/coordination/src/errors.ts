import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const COORDINATION_ERROR_CODES = [
  /** A key, holder, TTL, count or lease passed to a call is malformed; the message names it. */
  'TWG_COORDINATION_INVALID',
  /** The store did not answer or has no quorum; nothing is known to have changed. */
  'TWG_COORDINATION_UNAVAILABLE',
  /** A mode 1 backup could not be read or written. */
  'TWG_COORDINATION_BACKUP_FAILED',
  /** A mode 1 backup does not decode; it was left as it was. */
  'TWG_COORDINATION_BACKUP_CORRUPT',
  /** Another process wrote the same backup meanwhile: two mode 1 nodes share one key. */
  'TWG_COORDINATION_BACKUP_CONFLICT',
  /** Used after close. */
  'TWG_COORDINATION_CLOSED',
] as const;

export type CoordinationErrorCode = (typeof COORDINATION_ERROR_CODES)[number];

const CLASS_OF: Record<CoordinationErrorCode, ErrorClass> = {
  TWG_COORDINATION_INVALID: 'fatal-config',
  TWG_COORDINATION_UNAVAILABLE: 'transient',
  TWG_COORDINATION_BACKUP_FAILED: 'transient',
  TWG_COORDINATION_BACKUP_CORRUPT: 'fatal-config',
  TWG_COORDINATION_BACKUP_CONFLICT: 'fatal-config',
  TWG_COORDINATION_CLOSED: 'fatal-config',
};

/** Every runtime failure of the coordination tier (a refused option is a ConfigError). */
export class CoordinationError extends ThalwegError<CoordinationErrorCode> {
  /** The offending input for TWG_COORDINATION_INVALID. */
  readonly field: string | undefined;

  constructor(code: CoordinationErrorCode, message: string, cause?: unknown, field?: string) {
    super({ code, errorClass: CLASS_OF[code], message, cause });
    this.field = field;
  }
}

export function invalidInput(field: string, reason: string): CoordinationError {
  return new CoordinationError('TWG_COORDINATION_INVALID', `${field}: ${reason}`, undefined, field);
}
