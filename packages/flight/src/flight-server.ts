import {
  Server,
  ServerCredentials,
  status,
  type ServerDuplexStream,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { RecordBatch, Schema } from 'apache-arrow';
import { FlightError, atMessage } from './errors.js';
import { FlightBatchReader, batchFlightData, schemaFlightData } from './flight-data-framing.js';
import {
  decodeAction,
  decodeFlightData,
  decodeSingleBytes,
  describeDescriptor,
  encodeFlightData,
  encodeFlightInfo,
  encodeSingleBytes,
  type FlightDescriptor,
  type FlightInfo,
} from './flight-messages.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  flightServiceDefinition,
  messageLimits,
  type FlightMethod,
} from './flight-service.js';

/** One batch a DoGet handler streams, with the app_metadata of its FlightData. */
export interface FlightBatchOut {
  readonly batch: RecordBatch;
  readonly appMetadata?: Uint8Array | null;
}

/** What a DoGet handler answers: the schema (sent first, even with no batch), then the batches. */
export interface FlightGetStream {
  readonly schema: Schema;
  readonly batches: Iterable<FlightBatchOut> | AsyncIterable<FlightBatchOut>;
}

/** One batch a DoPut delivered; `seq` counts the call's batches from 1. */
export interface FlightPutBatch {
  readonly descriptor: FlightDescriptor;
  readonly schema: Schema;
  readonly batch: RecordBatch;
  readonly appMetadata: Uint8Array | null;
  readonly seq: number;
}

/**
 * What the server does. Any method left out answers UNIMPLEMENTED. A handler
 * that throws (or a stream that fails) ends the call with INTERNAL and the
 * error's message; a FlightError of bad data ends it with INVALID_ARGUMENT.
 * `signal` aborts when the client cancels.
 */
export interface FlightServerHandlers {
  readonly doGet?: (
    ticket: Uint8Array,
    signal: AbortSignal,
  ) => FlightGetStream | Promise<FlightGetStream>;
  /**
   * Called for each batch as it arrives, without waiting for the last one's
   * promise; its PutResult (with the app_metadata it resolves to) is written
   * when it resolves, so results go out in the order the promises settle.
   * The call ends once every promise has settled and the client has ended.
   */
  readonly doPut?: (put: FlightPutBatch) => Promise<Uint8Array | null>;
  readonly doAction?: (
    type: string,
    body: Uint8Array,
    signal: AbortSignal,
  ) => Iterable<Uint8Array> | AsyncIterable<Uint8Array>;
  readonly listFlights?: (criteria: Uint8Array) => Iterable<FlightInfo> | AsyncIterable<FlightInfo>;
}

export interface FlightServer {
  /** `grpc://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the server; calls still running are cancelled. */
  close(): Promise<void>;
}

/**
 * A Flight server on 127.0.0.1 and a free port, for tests and small
 * services: DoGet, DoPut, DoAction and ListFlights from plain handlers, each
 * write waiting for gRPC flow control. `maxMessageBytes` bounds each message
 * as the client's option does (default 64 MiB).
 */
export async function flightServer(
  handlers: FlightServerHandlers,
  options: { readonly maxMessageBytes?: number } = {},
): Promise<FlightServer> {
  const server = new Server(messageLimits(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES));
  const methods: FlightMethod[] = ['DoGet', 'DoPut', 'DoAction', 'ListFlights'];
  const implementation: UntypedServiceImplementation = {
    DoGet: (call: ServerWritableStream<Uint8Array, Uint8Array>) => void serveDoGet(call, handlers),
    DoPut: (call: ServerDuplexStream<Uint8Array, Uint8Array>) => void serveDoPut(call, handlers),
    DoAction: (call: ServerWritableStream<Uint8Array, Uint8Array>) =>
      void serveDoAction(call, handlers),
    ListFlights: (call: ServerWritableStream<Uint8Array, Uint8Array>) =>
      void serveListFlights(call, handlers),
  };
  server.addService(flightServiceDefinition(methods), implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  );
  return {
    url: `grpc://127.0.0.1:${port}`,
    close: () => {
      server.forceShutdown();
      return Promise.resolve();
    },
  };
}

type Writable =
  ServerWritableStream<Uint8Array, Uint8Array> | ServerDuplexStream<Uint8Array, Uint8Array>;

async function serveDoGet(
  call: ServerWritableStream<Uint8Array, Uint8Array>,
  handlers: FlightServerHandlers,
): Promise<void> {
  await serve(call, 'DoGet', handlers.doGet, async (doGet, signal) => {
    const stream = await doGet(decodeSingleBytes(call.request, 'Ticket'), signal);
    const first = schemaFlightData(stream.schema);
    await send(call, encodeFlightData(first));
    for await (const out of stream.batches) {
      if (signal.aborted) return;
      const data = batchFlightData(
        out.batch,
        first.dataHeader,
        out.appMetadata ?? new Uint8Array(0),
      );
      await send(call, encodeFlightData(data));
    }
  });
}

async function serveDoPut(
  call: ServerDuplexStream<Uint8Array, Uint8Array>,
  handlers: FlightServerHandlers,
): Promise<void> {
  await serve(call, 'DoPut', handlers.doPut, async (doPut) => {
    const pending: Promise<void>[] = [];
    // Messages are taken from 'data' events, not an async iterator: an
    // iterator destroys the duplex when the call fails, and a destroyed call
    // never sends its status. Each message is handled synchronously; the
    // handler's promises are what the call waits for before it ends.
    await new Promise<void>((resolve, reject) => {
      const stop = (cause: unknown) => {
        call.off('data', onData);
        call.pause();
        reject(cause instanceof Error ? cause : new Error(String(cause)));
      };
      const onData = (bytes: Uint8Array) => {
        try {
          const put = puts.next(bytes);
          if (put !== undefined) {
            pending.push(
              doPut(put).then((result) =>
                send(call, encodeSingleBytes(result ?? new Uint8Array(0))),
              ),
            );
            pending.at(-1)?.catch(stop);
          }
        } catch (cause) {
          stop(cause);
        }
      };
      const puts = new PutReader();
      call.on('data', onData);
      call.once('end', resolve);
    });
    await Promise.all(pending);
  });
}

/** The batches of one DoPut call, from its FlightData in order: the first names the descriptor. */
class PutReader {
  private reader: FlightBatchReader | undefined;
  private descriptor: FlightDescriptor | undefined;
  private index = 0;
  private seq = 0;

  next(bytes: Uint8Array): FlightPutBatch | undefined {
    const data = atMessage(() => decodeFlightData(bytes), 'DoPut', this.index);
    this.index += 1;
    if (this.reader === undefined) {
      this.descriptor = data.descriptor;
      if (this.descriptor === undefined) {
        throw new FlightError('TWG_FLIGHT_DATA_INVALID', 'the first FlightData has no descriptor', {
          call: 'DoPut',
          message: 0,
        });
      }
      this.reader = new FlightBatchReader(`DoPut ${describeDescriptor(this.descriptor)}`);
    }
    const batch = this.reader.read(data);
    const { schema } = this.reader;
    if (batch === undefined || this.descriptor === undefined || schema === undefined)
      return undefined;
    this.seq += 1;
    const appMetadata = data.appMetadata.byteLength === 0 ? null : data.appMetadata;
    return { descriptor: this.descriptor, schema, batch, appMetadata, seq: this.seq };
  }
}

async function serveDoAction(
  call: ServerWritableStream<Uint8Array, Uint8Array>,
  handlers: FlightServerHandlers,
): Promise<void> {
  await serve(call, 'DoAction', handlers.doAction, async (doAction, signal) => {
    const action = decodeAction(call.request);
    for await (const body of doAction(action.type, action.body, signal)) {
      await send(call, encodeSingleBytes(body));
    }
  });
}

async function serveListFlights(
  call: ServerWritableStream<Uint8Array, Uint8Array>,
  handlers: FlightServerHandlers,
): Promise<void> {
  await serve(call, 'ListFlights', handlers.listFlights, async (listFlights) => {
    for await (const info of listFlights(decodeSingleBytes(call.request, 'Criteria'))) {
      await send(call, encodeFlightInfo(info));
    }
  });
}

/**
 * Runs one call: UNIMPLEMENTED without a handler, the handler's failure as
 * the call's status, OK after everything was written. A cancelled call
 * aborts the handler's signal.
 */
async function serve<H>(
  call: Writable,
  method: FlightMethod,
  handler: H | undefined,
  run: (handler: H, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  if (handler === undefined) {
    call.emit('error', { code: status.UNIMPLEMENTED, details: `${method} is not served here` });
    return;
  }
  const cancelled = new AbortController();
  call.on('cancelled', () => cancelled.abort(new Error(`${method} cancelled by the client`)));
  try {
    await run(handler, cancelled.signal);
    if (!cancelled.signal.aborted) call.end();
  } catch (cause) {
    if (!cancelled.signal.aborted) call.emit('error', statusOf(cause));
  }
}

function statusOf(cause: unknown): { code: number; details: string } {
  const bad =
    cause instanceof FlightError &&
    (cause.code === 'TWG_FLIGHT_DATA_INVALID' ||
      cause.code === 'TWG_FLIGHT_PROTOBUF_INVALID' ||
      cause.code === 'TWG_FLIGHT_UNSUPPORTED');
  return {
    code: bad ? status.INVALID_ARGUMENT : status.INTERNAL,
    details: cause instanceof Error ? cause.message : String(cause),
  };
}

/** Writes one message, waiting while the call's buffer is full (gRPC flow control). */
function send(call: Writable, bytes: Uint8Array): Promise<void> {
  // A call that already ended (failed, or cancelled) takes nothing more.
  if (call.writableEnded || call.destroyed || call.cancelled) return Promise.resolve();
  if (call.write(bytes)) return Promise.resolve();
  // A cancelled call never drains: its end releases the writer too.
  const events = ['drain', 'close', 'cancelled', 'error'] as const;
  return new Promise<void>((resolve) => {
    const done = () => {
      for (const event of events) call.off(event, done);
      resolve();
    };
    for (const event of events) call.on(event, done);
  });
}
