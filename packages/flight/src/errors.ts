import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const FLIGHT_ERROR_CODES = [
  /** The URL is not `grpc://host:port` or `grpc+tcp://host:port`. */
  'TWG_FLIGHT_URL_INVALID',
  /** No connection to the server could be made; names the URL. */
  'TWG_FLIGHT_UNREACHABLE',
  /** The server ended the call with a gRPC error status; `grpcCode` holds it. */
  'TWG_FLIGHT_CALL_FAILED',
  /** The call was cancelled by the caller's AbortSignal. */
  'TWG_FLIGHT_CANCELLED',
  /** Bytes that are not a protobuf message of the expected shape; `offset` names where. */
  'TWG_FLIGHT_PROTOBUF_INVALID',
  /** A FlightData that is not a readable IPC message; names the message index and byte position. */
  'TWG_FLIGHT_DATA_INVALID',
  /** Valid Flight this package does not read (dictionary batches, metadata-only messages). */
  'TWG_FLIGHT_UNSUPPORTED',
  /** A call used out of order (a write after end, a batch of another schema). */
  'TWG_FLIGHT_MISUSE',
  /** A PutResult whose app_metadata is not `{"seq":n}` of a batch the stream wrote. */
  'TWG_FLIGHT_PUT_RESULT_INVALID',
  /** A DoGet answer that breaks our conventions (no `{"offset"}`, stored metadata that is not a span). */
  'TWG_FLIGHT_METADATA_INVALID',
  /** A sink or source used after close, or a cursor of the wrong kind. */
  'TWG_FLIGHT_STATE',
  /** A live stream ended before its end: it cannot resume, or resuming it failed or would skip rows. */
  'TWG_FLIGHT_STREAM_DROPPED',
] as const;

export type FlightErrorCode = (typeof FLIGHT_ERROR_CODES)[number];

/**
 * Which failures a retry may cure: a server that cannot be reached, a call
 * the server or the network broke and a cancelled call are `transient` (a
 * new call may succeed); bytes we cannot read are `poison` (the same
 * stream sends them again); a bad URL or a misused call is `fatal-config`.
 * A gRPC status is classed by `classOfStatus`.
 */
const CLASS_OF: Record<FlightErrorCode, ErrorClass> = {
  TWG_FLIGHT_URL_INVALID: 'fatal-config',
  TWG_FLIGHT_UNREACHABLE: 'transient',
  TWG_FLIGHT_CALL_FAILED: 'transient',
  TWG_FLIGHT_CANCELLED: 'transient',
  TWG_FLIGHT_PROTOBUF_INVALID: 'poison',
  TWG_FLIGHT_DATA_INVALID: 'poison',
  TWG_FLIGHT_UNSUPPORTED: 'poison',
  TWG_FLIGHT_MISUSE: 'fatal-config',
  TWG_FLIGHT_PUT_RESULT_INVALID: 'poison',
  TWG_FLIGHT_METADATA_INVALID: 'poison',
  TWG_FLIGHT_STATE: 'fatal-config',
  TWG_FLIGHT_STREAM_DROPPED: 'poison',
};

/** Where a failure is: the call, the FlightData index on it, a byte position. */
export interface FlightErrorLocation {
  /** `DoGet ticket "…"`, `DoPut path a/b`: what the call was about. */
  readonly call?: string;
  /** 0-based index of the FlightData message on the call. */
  readonly message?: number;
  /** Byte position in the IPC stream the call's messages make up (or in a protobuf). */
  readonly offset?: number;
  /** The gRPC status code of a failed call. */
  readonly grpcCode?: number;
}

export class FlightError extends ThalwegError<FlightErrorCode> {
  readonly call: string | undefined;
  /** The 0-based index of the FlightData message the failure is about. */
  readonly messageIndex: number | undefined;
  readonly offset: number | undefined;
  readonly grpcCode: number | undefined;
  /** The reason alone, without the code and the location. */
  readonly reason: string;

  constructor(
    code: FlightErrorCode,
    reason: string,
    at: FlightErrorLocation = {},
    options: { readonly cause?: unknown; readonly errorClass?: ErrorClass } = {},
  ) {
    super({
      code,
      errorClass: options.errorClass ?? CLASS_OF[code],
      message: locate(at) + reason,
      cause: options.cause,
    });
    this.reason = reason;
    this.call = at.call;
    this.messageIndex = at.message;
    this.offset = at.offset;
    this.grpcCode = at.grpcCode;
  }
}

function locate(at: FlightErrorLocation): string {
  const parts: string[] = [];
  if (at.call !== undefined) parts.push(at.call);
  if (at.message !== undefined) parts.push(`message ${at.message}`);
  if (at.offset !== undefined) parts.push(`byte ${at.offset}`);
  return parts.length === 0 ? '' : `${parts.join(', ')}: `;
}

/**
 * The reason of another thalweg error (stream-arrow's, the protobuf
 * codec's) without its code and its own byte offset, which is a position
 * in bytes the caller never saw.
 */
export function reasonOf(cause: Error & { readonly code?: unknown }): string {
  if (cause instanceof FlightError) return cause.reason;
  const code = typeof cause.code === 'string' ? cause.code : '';
  const text = cause.message.startsWith(`${code}: `)
    ? cause.message.slice(code.length + 2)
    : cause.message;
  return `${text.replace(/^byte \d+: /, '')}${code === '' ? '' : ` (${code})`}`;
}

/** A refusal of the `index`-th message of `call`, placed there. */
export function atMessage<T>(run: () => T, call: string, index: number): T {
  try {
    return run();
  } catch (cause) {
    if (!(cause instanceof FlightError)) throw cause;
    throw new FlightError(
      cause.code,
      cause.reason,
      { call, message: index, ...(cause.offset === undefined ? {} : { offset: cause.offset }) },
      { cause },
    );
  }
}
