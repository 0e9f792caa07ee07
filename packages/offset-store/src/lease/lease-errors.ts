import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const LEASE_ERROR_CODES = [
  /**
   * A key, holder, prefix, TTL or lease passed to a call is malformed; the
   * message names the field. A store's bad option is a ConfigError instead.
   */
  'TWG_LEASE_INVALID',
  /** The durable backend could not be reached or failed; nothing is known to have changed. */
  'TWG_LEASE_STORE_FAILED',
  /** A stored lease cannot be decoded (corrupt or foreign object, bad row); it was left as it was. */
  'TWG_LEASE_CORRUPT',
  /** A stored lease or the lease schema was written by a newer version than this code knows. */
  'TWG_LEASE_FORMAT_NEWER',
  /** Every bounded conditional write lost to concurrent writers. */
  'TWG_LEASE_CONTENTION',
  /** The store was used after close. */
  'TWG_LEASE_CLOSED',
] as const;

export type LeaseErrorCode = (typeof LEASE_ERROR_CODES)[number];

const CLASS_OF: Record<LeaseErrorCode, ErrorClass> = {
  TWG_LEASE_INVALID: 'fatal-config',
  TWG_LEASE_STORE_FAILED: 'transient',
  TWG_LEASE_CORRUPT: 'fatal-config',
  TWG_LEASE_FORMAT_NEWER: 'fatal-config',
  TWG_LEASE_CONTENTION: 'transient',
  TWG_LEASE_CLOSED: 'fatal-config',
};

/**
 * Every failure of a lease store. A refused input or a corrupt stored lease
 * changes nothing; a transient failure may leave a write whose answer was
 * lost (see `LeaseStore`), which costs at most one TTL of waiting.
 *
 * Kept beside the lease stores rather than in the package's `errors.ts` so
 * the lease concept stays one folder; the shape is the same as `CoverageError`.
 */
export class LeaseError extends ThalwegError<LeaseErrorCode> {
  /** The offending input field (`key`, `ttlMs`, `lease.token`, ...) for TWG_LEASE_INVALID. */
  readonly field: string | undefined;

  constructor(code: LeaseErrorCode, message: string, cause?: unknown, field?: string) {
    super({ code, errorClass: CLASS_OF[code], message, cause });
    this.field = field;
  }
}

/** A refused input, named by field. */
export function invalidLeaseInput(field: string, reason: string): LeaseError {
  return new LeaseError('TWG_LEASE_INVALID', `${field}: ${reason}`, undefined, field);
}
