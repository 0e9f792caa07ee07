import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const FILE_SOURCE_ERROR_CODES = [
  /** A stored cursor this file set cannot resume from; `field` names the cursor field. */
  'TWG_FILE_CURSOR_INVALID',
  /** `cursorAt` for an offset that was not a batch boundary the source still remembers. */
  'TWG_FILE_POSITION_UNKNOWN',
  /** Bytes that are not a readable Arrow IPC stream or file; names `file` and `position`. */
  'TWG_FILE_IPC_INVALID',
  /** Valid Arrow IPC this source does not read (compression, dictionaries, a column type). */
  'TWG_FILE_IPC_UNSUPPORTED',
  /** A record larger than the read buffer may grow to; names `file` and `position`. */
  'TWG_FILE_RECORD_TOO_LARGE',
  /** A file whose size or modification time differs from the snapshot of the set. */
  'TWG_FILE_CHANGED',
  /** The operating system refused a read, an open or a stat; `cause` holds its error. */
  'TWG_FILE_READ_FAILED',
  /** A call out of order: seek after batches, two iterations at once, a foreign partition. */
  'TWG_FILE_SOURCE_STATE',
] as const;

export type FileSourceErrorCode = (typeof FILE_SOURCE_ERROR_CODES)[number];

/**
 * Bad bytes in a file never heal on a retry and a source has no record
 * boundary to quarantine them by (the pipeline quarantines records, not
 * unreadable file regions): `fatal-config`, fail loud, an operator replaces
 * the file. Only a refused read can succeed when tried again; its class is
 * decided per errno (`READ_FAILED` below is the default).
 */
const CLASS_OF: Record<FileSourceErrorCode, ErrorClass> = {
  TWG_FILE_CURSOR_INVALID: 'fatal-config',
  TWG_FILE_POSITION_UNKNOWN: 'fatal-config',
  TWG_FILE_IPC_INVALID: 'fatal-config',
  TWG_FILE_IPC_UNSUPPORTED: 'fatal-config',
  TWG_FILE_RECORD_TOO_LARGE: 'fatal-config',
  TWG_FILE_CHANGED: 'fatal-config',
  TWG_FILE_READ_FAILED: 'transient',
  TWG_FILE_SOURCE_STATE: 'fatal-config',
};

/** Where a failure is: a file of the set, a byte position in it, a field (cursor or column). */
export interface FileErrorLocation {
  readonly file?: string;
  readonly position?: number;
  readonly field?: string;
}

export class FileSourceError extends ThalwegError<FileSourceErrorCode> {
  readonly file: string | undefined;
  readonly position: number | undefined;
  readonly field: string | undefined;

  constructor(
    code: FileSourceErrorCode,
    reason: string,
    at: FileErrorLocation = {},
    options: { readonly cause?: unknown; readonly errorClass?: ErrorClass } = {},
  ) {
    super({
      code,
      errorClass: options.errorClass ?? CLASS_OF[code],
      message: locate(at) + reason,
      cause: options.cause,
    });
    this.file = at.file;
    this.position = at.position;
    this.field = at.field;
  }
}

/** errnos that no retry fixes: the path is wrong or not ours to read. */
const FATAL_ERRNO: ReadonlySet<string> = new Set([
  'ENOENT',
  'ENOTDIR',
  'EISDIR',
  'EACCES',
  'EPERM',
]);

/** Wraps an operating-system error of `file`, classed by its errno. */
export function readFailed(file: string, action: string, cause: unknown): FileSourceError {
  if (cause instanceof FileSourceError) return cause;
  const code = errnoOf(cause);
  return new FileSourceError(
    'TWG_FILE_READ_FAILED',
    `${action} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    { file },
    {
      cause,
      errorClass: code !== undefined && FATAL_ERRNO.has(code) ? 'fatal-config' : 'transient',
    },
  );
}

function errnoOf(cause: unknown): string | undefined {
  if (typeof cause !== 'object' || cause === null || !('code' in cause)) return undefined;
  return typeof cause.code === 'string' ? cause.code : undefined;
}

function locate(at: FileErrorLocation): string {
  const parts: string[] = [];
  if (at.file !== undefined) parts.push(`file ${JSON.stringify(at.file)}`);
  if (at.position !== undefined) parts.push(`byte ${at.position}`);
  if (at.field !== undefined) parts.push(at.field);
  return parts.length === 0 ? '' : `${parts.join(', ')}: `;
}
