import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const COVERAGE_ERROR_CODES = [
  /** A range is empty, inverted, negative or not a safe integer. */
  'TWG_COVERAGE_RANGE_INVALID',
  /** The sink is not known to this store. */
  'TWG_COVERAGE_UNKNOWN_SINK',
  /** A receipt that does not prove a durable acknowledgement. */
  'TWG_COVERAGE_NOT_DURABLE',
  /** Stored coverage cannot be decoded (corrupted object or row). */
  'TWG_COVERAGE_CORRUPT',
  /** Stored coverage was written by a newer schema version than this code knows. */
  'TWG_COVERAGE_SCHEMA_NEWER',
  /** A conditional write lost every retry against concurrent writers. */
  'TWG_COVERAGE_CONTENTION',
  /** The durable backend could not be reached or failed. */
  'TWG_COVERAGE_BACKEND',
  /** The store was used after close. */
  'TWG_COVERAGE_CLOSED',
  /** A cursor rewind that is not one: forward, of another kind, or of no stored cursor. */
  'TWG_COVERAGE_REWIND_REFUSED',
] as const;

export type CoverageErrorCode = (typeof COVERAGE_ERROR_CODES)[number];

const CLASS_OF: Record<CoverageErrorCode, ErrorClass> = {
  TWG_COVERAGE_RANGE_INVALID: 'fatal-config',
  TWG_COVERAGE_UNKNOWN_SINK: 'fatal-config',
  TWG_COVERAGE_NOT_DURABLE: 'fatal-config',
  TWG_COVERAGE_CORRUPT: 'fatal-config',
  TWG_COVERAGE_SCHEMA_NEWER: 'fatal-config',
  TWG_COVERAGE_CONTENTION: 'transient',
  TWG_COVERAGE_BACKEND: 'transient',
  TWG_COVERAGE_CLOSED: 'fatal-config',
  TWG_COVERAGE_REWIND_REFUSED: 'fatal-config',
};

/** Every failure of the offset store. Nothing is changed when one is thrown. */
export class CoverageError extends ThalwegError<CoverageErrorCode> {
  constructor(code: CoverageErrorCode, message: string, cause?: unknown) {
    super({ code, errorClass: CLASS_OF[code], message, cause });
  }
}
