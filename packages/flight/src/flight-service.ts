import {
  status,
  type MethodDefinition,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { FlightError } from './errors.js';

/**
 * The methods of `arrow.flight.protocol.FlightService` this package calls and
 * serves. Messages cross grpc-js as raw bytes: our protobuf codec
 * (flight-messages.ts) encodes and decodes them where the caller can name a
 * failure by its call and message index, which a grpc-js deserializer that
 * throws cannot (it ends the call with a bare INTERNAL status).
 */
export const FLIGHT_SERVICE = 'arrow.flight.protocol.FlightService';

/**
 * The largest gRPC message either side takes or sends unless told otherwise.
 * grpc-js's own default (4 MiB received) refuses ordinary Arrow batches; no
 * bound at all would let a peer make us buffer anything it declares.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** grpc-js channel options for a message bound. */
export function messageLimits(maxMessageBytes: number): Record<string, number> {
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1) {
    throw new FlightError(
      'TWG_FLIGHT_MISUSE',
      `maxMessageBytes ${maxMessageBytes} is not a positive integer`,
    );
  }
  return {
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.max_send_message_length': maxMessageBytes,
  };
}

export type FlightMethod = 'DoGet' | 'DoPut' | 'DoAction' | 'ListFlights' | 'ListActions';

const SHAPES: Record<
  FlightMethod,
  { readonly requestStream: boolean; readonly responseStream: boolean }
> = {
  DoGet: { requestStream: false, responseStream: true },
  DoPut: { requestStream: true, responseStream: true },
  DoAction: { requestStream: false, responseStream: true },
  ListFlights: { requestStream: false, responseStream: true },
  ListActions: { requestStream: false, responseStream: true },
};

export function methodPath(method: FlightMethod): string {
  return `/${FLIGHT_SERVICE}/${method}`;
}

/** Bytes in, bytes out: grpc-js hands us a Buffer and sends what we give it. */
export const rawSerialize = (value: Uint8Array): Buffer =>
  Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
export const rawDeserialize = (value: Buffer): Uint8Array => value;

/** The service definition grpc-js's Server takes, for the methods named. */
export function flightServiceDefinition(
  methods: readonly FlightMethod[],
): ServiceDefinition<Record<string, MethodDefinition<Uint8Array, Uint8Array>>> {
  const definition: Record<string, MethodDefinition<Uint8Array, Uint8Array>> = {};
  for (const method of methods) {
    definition[method] = {
      path: methodPath(method),
      ...SHAPES[method],
      requestSerialize: rawSerialize,
      requestDeserialize: rawDeserialize,
      responseSerialize: rawSerialize,
      responseDeserialize: rawDeserialize,
      originalName: method,
    };
  }
  return definition;
}

/**
 * A grpc-js failure as ours. UNAVAILABLE is a server that cannot be reached
 * (or that went away), named by its URL; CANCELLED after our own abort is
 * the caller's cancellation, with the signal's reason as the cause; any
 * other status is the server's error, with its code and details, `transient`
 * only for the codes a new call may cure.
 */
export function callError(
  cause: unknown,
  where: { readonly call: string; readonly url: string; readonly signal?: AbortSignal | undefined },
): FlightError {
  if (cause instanceof FlightError) return cause;
  if (where.signal?.aborted === true) {
    return new FlightError(
      'TWG_FLIGHT_CANCELLED',
      'cancelled by the caller',
      { call: where.call },
      {
        cause: where.signal.reason,
      },
    );
  }
  const grpcCode = isServiceError(cause) ? cause.code : status.UNKNOWN;
  const details = isServiceError(cause) ? cause.details : String(cause);
  if (grpcCode === status.UNAVAILABLE) {
    return new FlightError(
      'TWG_FLIGHT_UNREACHABLE',
      `the Flight server at ${where.url} is unreachable: ${details}`,
      { call: where.call, grpcCode },
      { cause },
    );
  }
  return new FlightError(
    'TWG_FLIGHT_CALL_FAILED',
    `the server at ${where.url} ended the call with ${statusName(grpcCode)}: ${details}`,
    { call: where.call, grpcCode },
    { cause, errorClass: RETRYABLE.has(grpcCode) ? 'transient' : 'fatal-config' },
  );
}

const RETRYABLE = new Set<number>([
  status.UNKNOWN,
  status.DEADLINE_EXCEEDED,
  status.RESOURCE_EXHAUSTED,
  status.ABORTED,
  status.INTERNAL,
  status.CANCELLED,
]);

function isServiceError(e: unknown): e is ServiceError {
  return e instanceof Error && typeof (e as Partial<ServiceError>).code === 'number';
}

/** The status's name (`INTERNAL`), or its number when grpc-js does not know it. */
function statusName(code: number): string {
  const names: Readonly<Record<number, string | undefined>> = status;
  return names[code] ?? String(code);
}
