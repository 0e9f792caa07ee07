import type { ArrowBatchError } from '@thalweg/stream-arrow';
import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const IPC_STREAM_ERROR_CODES = [
  /** Bytes that are not a readable Arrow IPC stream; names the stream `position` and the `batch`. */
  'TWG_IPC_STREAM_INVALID',
  /** Valid Arrow this source does not read (a column type, a dictionary, a message too large). */
  'TWG_IPC_STREAM_UNSUPPORTED',
  /** A non-resumable stream closed before its end marker: the rows it did not send are lost. */
  'TWG_IPC_STREAM_DROPPED',
  /** The producer can no longer send from our position (`{"error":..}`, HTTP 410, a gap): data loss. */
  'TWG_IPC_STREAM_RESUME_REFUSED',
  /** A resume answer that is not the handshake (spec: stream-spec.md). */
  'TWG_IPC_STREAM_HANDSHAKE_INVALID',
  /** The connection could not be opened (refused, reset, an HTTP status other than 200). */
  'TWG_IPC_STREAM_CONNECT_FAILED',
  /** A stored cursor this source cannot resume from; names the cursor field. */
  'TWG_IPC_STREAM_CURSOR_INVALID',
  /** A call out of order: seek after batches, two iterations, a foreign partition. */
  'TWG_IPC_STREAM_STATE',
] as const;

export type IpcStreamErrorCode = (typeof IPC_STREAM_ERROR_CODES)[number];

/**
 * Bad bytes and lost positions never heal on a retry: fail loud. Only a
 * connection that could not be opened may succeed when tried again.
 */
const CLASS_OF: Record<IpcStreamErrorCode, ErrorClass> = {
  TWG_IPC_STREAM_INVALID: 'fatal-config',
  TWG_IPC_STREAM_UNSUPPORTED: 'fatal-config',
  TWG_IPC_STREAM_DROPPED: 'fatal-config',
  TWG_IPC_STREAM_RESUME_REFUSED: 'fatal-config',
  TWG_IPC_STREAM_HANDSHAKE_INVALID: 'fatal-config',
  TWG_IPC_STREAM_CONNECT_FAILED: 'transient',
  TWG_IPC_STREAM_CURSOR_INVALID: 'fatal-config',
  TWG_IPC_STREAM_STATE: 'fatal-config',
};

/** Where a failure is in the stream: a byte `position`, a record `batch` index, a `field`. */
export interface IpcStreamErrorLocation {
  readonly position?: number;
  readonly batch?: number;
  readonly field?: string;
}

export class IpcStreamSourceError extends ThalwegError<IpcStreamErrorCode> {
  readonly position: number | undefined;
  readonly batch: number | undefined;
  readonly field: string | undefined;

  constructor(
    code: IpcStreamErrorCode,
    reason: string,
    at: IpcStreamErrorLocation = {},
    cause?: unknown,
  ) {
    super({ code, errorClass: CLASS_OF[code], message: locate(at) + reason, cause });
    this.position = at.position;
    this.batch = at.batch;
    this.field = at.field;
  }
}

function locate(at: IpcStreamErrorLocation): string {
  const parts: string[] = [];
  if (at.batch !== undefined) parts.push(`record batch ${at.batch}`);
  if (at.position !== undefined) parts.push(`stream byte ${at.position}`);
  if (at.field !== undefined) parts.push(at.field);
  return parts.length === 0 ? '' : `${parts.join(', ')}: `;
}

/** stream-arrow's refusal of a stream's bytes as this source's, at the stream byte and batch it names. */
export function refusedAt(
  cause: ArrowBatchError,
  decoder: { readonly offset: number; readonly batchCount: number },
): IpcStreamSourceError {
  const invalid =
    cause.code === 'TWG_ARROW_IPC_INVALID' || cause.code === 'TWG_ARROW_IPC_BATCH_COUNT';
  return new IpcStreamSourceError(
    invalid ? 'TWG_IPC_STREAM_INVALID' : 'TWG_IPC_STREAM_UNSUPPORTED',
    `${cause.reason}; rows before it were kept, nothing after it is read`,
    {
      position: cause.offset ?? decoder.offset,
      batch: decoder.batchCount,
      ...(cause.field === undefined ? {} : { field: `column ${JSON.stringify(cause.field)}` }),
    },
    cause,
  );
}
