import { ThalwegError, type ErrorClass, type OffsetSpan } from '@thalweg/connector-core';

export const RAW_ERROR_CODES = [
  /** A submitted batch that can never be written as given; names the field and the offset. */
  'TWG_RAW_BATCH_INVALID',
  /** A segment could not be made durable within the retry budget; names the file and the cause. */
  'TWG_RAW_WRITE_FAILED',
  /** A segment on disk that does not parse as a raw segment; names the file. */
  'TWG_RAW_SEGMENT_CORRUPT',
  /**
   * Stored bytes that do not match the checksum written with them; names the
   * file, the byte position and the offset range the damaged bytes hold.
   */
  'TWG_RAW_CHECKSUM_MISMATCH',
  /**
   * A segment the manifest lists as durable is missing or shorter than
   * written; names the file and the offset range it held.
   */
  'TWG_RAW_SEGMENT_MISSING',
  /** The directory's manifest (raw.manifest) is damaged or disagrees with the segments; names the line. */
  'TWG_RAW_MANIFEST_CORRUPT',
  /** Another live writer holds the directory; names the holder (pid, host). */
  'TWG_RAW_DIR_LOCKED',
  /** A segment of another format version; names the file. */
  'TWG_RAW_SEGMENT_VERSION',
  /** Two durable copies of one offset whose stored content differs; names both files. */
  'TWG_RAW_RECORD_CONFLICT',
  /** The writer thread cannot start (its compiled entry is missing or of another build). */
  'TWG_RAW_WRITER_UNAVAILABLE',
  /** Submit after close. */
  'TWG_RAW_CLOSED',
] as const;

export type RawErrorCode = (typeof RAW_ERROR_CODES)[number];

/**
 * - A bad batch is `poison`: no retry makes it writable; quarantine or fix the source.
 * - A write that failed through every retry is `poison`: this sink instance is
 *   done; reopening it (a new instance) and replaying what was never confirmed
 *   is the rebuild.
 * - Corruption and conflicts are `fatal-config`: raw no longer proves what it
 *   holds, and a person must look before anything is replayed from it. So is
 *   a segment of another format version (no reader for it ships) and a
 *   writer thread that cannot start (a missing or stale build).
 */
const CLASS_OF: Record<RawErrorCode, ErrorClass> = {
  TWG_RAW_BATCH_INVALID: 'poison',
  TWG_RAW_WRITE_FAILED: 'poison',
  TWG_RAW_SEGMENT_CORRUPT: 'fatal-config',
  TWG_RAW_SEGMENT_VERSION: 'fatal-config',
  TWG_RAW_CHECKSUM_MISMATCH: 'fatal-config',
  TWG_RAW_SEGMENT_MISSING: 'fatal-config',
  TWG_RAW_MANIFEST_CORRUPT: 'fatal-config',
  TWG_RAW_DIR_LOCKED: 'fatal-config',
  TWG_RAW_RECORD_CONFLICT: 'fatal-config',
  TWG_RAW_WRITER_UNAVAILABLE: 'fatal-config',
  TWG_RAW_CLOSED: 'fatal-config',
};

/**
 * Where a failure is: a segment file, a byte position in it, the offset
 * ranges the damaged bytes hold, a field of the input, a source offset.
 */
export interface RawErrorLocation {
  readonly file?: string;
  readonly position?: number;
  readonly spans?: readonly OffsetSpan[];
  readonly field?: string;
  readonly offset?: number;
}

export class RawSinkError extends ThalwegError<RawErrorCode> {
  readonly file: string | undefined;
  /** Byte position in `file` where the damage was found. */
  readonly position: number | undefined;
  /** The offset ranges that cannot be trusted (or are missing): what to re-read from the source. */
  readonly spans: readonly OffsetSpan[];
  readonly field: string | undefined;
  readonly offset: number | undefined;
  /** The message without the location: what a writer thread sends across to be located again. */
  readonly reason: string;

  constructor(code: RawErrorCode, reason: string, at: RawErrorLocation = {}, cause?: unknown) {
    super({ code, errorClass: CLASS_OF[code], message: locate(at) + reason, cause });
    this.reason = reason;
    this.file = at.file;
    this.position = at.position;
    this.spans = at.spans ?? [];
    this.field = at.field;
    this.offset = at.offset;
  }
}

function locate(at: RawErrorLocation): string {
  const parts: string[] = [];
  if (at.file !== undefined) parts.push(`segment ${at.file}`);
  if (at.position !== undefined) parts.push(`byte ${at.position}`);
  if (at.spans !== undefined && at.spans.length > 0)
    parts.push(`offsets ${describeSpans(at.spans)}`);
  if (at.field !== undefined) parts.push(`field "${at.field}"`);
  if (at.offset !== undefined) parts.push(`offset ${at.offset}`);
  return parts.length === 0 ? '' : `${parts.join(', ')}: `;
}

/** Offset ranges as `topic/partition [start, end)`, comma-separated. */
export function describeSpans(spans: readonly OffsetSpan[]): string {
  return spans.map((s) => `${s.topic}/${s.partition} [${s.start}, ${s.end})`).join(', ');
}

/** The message of any thrown value, for wrapping it into a located error. */
export function reasonOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * `ENOSPC` or `EDQUOT` when the error is the file system refusing space (no
 * space left on the device, or the user's quota spent), else null.
 */
export function diskFullCode(error: unknown): 'ENOSPC' | 'EDQUOT' | null {
  const code = (error as { readonly code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' ? code : null;
}
