import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const ARROW_ERROR_CODES = [
  /** A schema definition that cannot be used; `field` is the path of the bad entry. */
  'TWG_ARROW_SCHEMA_INVALID',
  /** A non-nullable field is missing (undefined) or null; names `field` and `row`. */
  'TWG_ARROW_VALUE_MISSING',
  /** A value of the wrong type or out of the column type's range; names `field` and `row`. */
  'TWG_ARROW_VALUE_INVALID',
  /** Builder input that does not fit together (column lengths, record id inputs). */
  'TWG_ARROW_INPUT_INVALID',
  /** Bytes that are not a readable Arrow IPC stream or file; `offset` names where. */
  'TWG_ARROW_IPC_INVALID',
  /** An IPC stream that does not hold exactly one record batch. */
  'TWG_ARROW_IPC_BATCH_COUNT',
  /** Compressed IPC bodies and no codecs to read them: pass `codecs` (from @thalweg/wire-compression). */
  'TWG_ARROW_IPC_COMPRESSED',
  /** Valid Arrow this reader does not read (a column type, a compression codec); names where. */
  'TWG_ARROW_IPC_UNSUPPORTED',
  /** Compressed IPC bodies that declare more uncompressed bytes than the caller's limit. */
  'TWG_ARROW_IPC_TOO_LARGE',
  /** A decoded batch whose schema differs from the expected one; names the `field`. */
  'TWG_ARROW_SCHEMA_MISMATCH',
  /** A batch with no rows where one is required (a sink message, a file segment). */
  'TWG_ARROW_BATCH_EMPTY',
] as const;

export type ArrowErrorCode = (typeof ARROW_ERROR_CODES)[number];

/**
 * A bad record or a bad message can never succeed on a retry or a rebuilt
 * stream: `poison`, route it to quarantine. Definitions and wiring mistakes
 * are `fatal-config`: fail loud.
 */
const CLASS_OF: Record<ArrowErrorCode, ErrorClass> = {
  TWG_ARROW_SCHEMA_INVALID: 'fatal-config',
  TWG_ARROW_VALUE_MISSING: 'poison',
  TWG_ARROW_VALUE_INVALID: 'poison',
  TWG_ARROW_INPUT_INVALID: 'fatal-config',
  TWG_ARROW_IPC_INVALID: 'poison',
  TWG_ARROW_IPC_BATCH_COUNT: 'poison',
  TWG_ARROW_IPC_COMPRESSED: 'fatal-config',
  TWG_ARROW_IPC_UNSUPPORTED: 'poison',
  TWG_ARROW_IPC_TOO_LARGE: 'fatal-config',
  TWG_ARROW_SCHEMA_MISMATCH: 'poison',
  TWG_ARROW_BATCH_EMPTY: 'fatal-config',
};

/** Where a failure is: a field (or config path), a row of the input, a byte offset. */
export interface ArrowErrorLocation {
  readonly field?: string;
  readonly row?: number;
  readonly offset?: number;
}

export class ArrowBatchError extends ThalwegError<ArrowErrorCode> {
  readonly field: string | undefined;
  readonly row: number | undefined;
  readonly offset: number | undefined;
  /** Why, without the location: for a caller that restates the location in its own terms. */
  readonly reason: string;

  constructor(code: ArrowErrorCode, reason: string, at: ArrowErrorLocation = {}, cause?: unknown) {
    super({ code, errorClass: CLASS_OF[code], message: locate(at) + reason, cause });
    this.reason = reason;
    this.field = at.field;
    this.row = at.row;
    this.offset = at.offset;
  }
}

function locate(at: ArrowErrorLocation): string {
  const parts: string[] = [];
  if (at.field !== undefined) parts.push(`field "${at.field}"`);
  if (at.row !== undefined) parts.push(`row ${at.row}`);
  if (at.offset !== undefined) parts.push(`byte ${at.offset}`);
  return parts.length === 0 ? '' : `${parts.join(', ')}: `;
}
