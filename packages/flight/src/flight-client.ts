import { Client, credentials, type ClientReadableStream } from '@grpc/grpc-js';
import type { RecordBatch, Schema } from 'apache-arrow';
import { FlightError, atMessage } from './errors.js';
import { FlightBatchReader } from './flight-data-framing.js';
import {
  decodeFlightData,
  decodeFlightInfo,
  decodeSingleBytes,
  describeDescriptor,
  encodeAction,
  encodeSingleBytes,
  type FlightDescriptor,
  type FlightInfo,
} from './flight-messages.js';
import { FlightPut } from './flight-put.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  callError,
  messageLimits,
  methodPath,
  rawDeserialize,
  rawSerialize,
} from './flight-service.js';

/** One record batch of a DoGet, with the app_metadata of its FlightData (null when it has none). */
export interface FlightBatch {
  readonly batch: RecordBatch;
  readonly appMetadata: Uint8Array | null;
}

export interface FlightClientOptions {
  /**
   * The largest message sent or received, in bytes (default 64 MiB): a
   * FlightData beyond it fails its call with RESOURCE_EXHAUSTED.
   */
  readonly maxMessageBytes?: number;
}

/**
 * A client of an Arrow Flight server (`grpc://host:port` or
 * `grpc+tcp://host:port`, plaintext). Every call takes an AbortSignal:
 * aborting it cancels the call (`AbortSignal.timeout(ms)` is a deadline),
 * and the call fails with TWG_FLIGHT_CANCELLED. A server that cannot be
 * reached fails the call with TWG_FLIGHT_UNREACHABLE naming the URL.
 */
export class FlightClient {
  private constructor(
    readonly url: string,
    private readonly client: Client,
  ) {}

  static connect(url: string, options: FlightClientOptions = {}): FlightClient {
    const limits = messageLimits(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    return new FlightClient(url, new Client(addressOf(url), credentials.createInsecure(), limits));
  }

  /**
   * The batches the server streams for `ticket`, each decoded through
   * stream-arrow's checked reader. Batches are handed on as they arrive; a
   * malformed message or a server that fails mid-stream rejects the
   * iterator with the ticket, the message index and the byte position.
   * Leaving the loop early cancels the call.
   */
  async *doGet(ticket: Uint8Array, signal?: AbortSignal): AsyncGenerator<FlightBatch> {
    const call = `DoGet ticket ${describeTicket(ticket)}`;
    const stream = this.client.makeServerStreamRequest(
      methodPath('DoGet'),
      rawSerialize,
      rawDeserialize,
      encodeSingleBytes(ticket),
    );
    const reader = new FlightBatchReader(call);
    let index = 0;
    for await (const bytes of this.messages(stream, call, signal)) {
      const data = atMessage(() => decodeFlightData(bytes), call, index);
      index += 1;
      const batch = reader.read(data);
      if (batch === undefined) continue;
      yield { batch, appMetadata: data.appMetadata.byteLength === 0 ? null : data.appMetadata };
    }
  }

  /**
   * Opens a DoPut of `schema` to `descriptor`: the schema message is sent at
   * once, then one FlightData per `write`. See FlightPut for flow control
   * and PutResults.
   */
  doPut(descriptor: FlightDescriptor, schema: Schema, signal?: AbortSignal): FlightPut {
    const call = `DoPut ${describeDescriptor(descriptor)}`;
    const stream = this.client.makeBidiStreamRequest(
      methodPath('DoPut'),
      rawSerialize,
      rawDeserialize,
    );
    return new FlightPut(stream, { descriptor, schema, call, url: this.url, signal });
  }

  /** The Result bodies of an action, in the order the server sends them. */
  async *doAction(
    type: string,
    body: Uint8Array,
    signal?: AbortSignal,
  ): AsyncGenerator<Uint8Array> {
    const call = `DoAction ${JSON.stringify(type)}`;
    const stream = this.client.makeServerStreamRequest(
      methodPath('DoAction'),
      rawSerialize,
      rawDeserialize,
      encodeAction(type, body),
    );
    let index = 0;
    for await (const bytes of this.messages(stream, call, signal)) {
      yield atMessage(() => decodeSingleBytes(bytes, 'Result'), call, index);
      index += 1;
    }
  }

  /** The flights the server lists; `criteria` is its Criteria.expression (empty: all). */
  async *listFlights(
    criteria: Uint8Array = new Uint8Array(0),
    signal?: AbortSignal,
  ): AsyncGenerator<FlightInfo> {
    const call = 'ListFlights';
    const stream = this.client.makeServerStreamRequest(
      methodPath('ListFlights'),
      rawSerialize,
      rawDeserialize,
      encodeSingleBytes(criteria),
    );
    let index = 0;
    for await (const bytes of this.messages(stream, call, signal)) {
      yield atMessage(() => decodeFlightInfo(bytes), call, index);
      index += 1;
    }
  }

  /** Closes the channel; calls still running fail. */
  close(): void {
    this.client.close();
  }

  /**
   * The raw messages of a server stream, its failure as ours. The call is
   * cancelled when the signal aborts and when the consumer stops early.
   */
  private async *messages(
    stream: ClientReadableStream<Uint8Array>,
    call: string,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<Uint8Array> {
    const cancel = () => stream.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    if (signal?.aborted === true) stream.cancel();
    let finished = false;
    try {
      for await (const message of stream) yield message as Uint8Array;
      finished = true;
    } catch (cause) {
      finished = true;
      throw callError(cause, { call, url: this.url, signal });
    } finally {
      signal?.removeEventListener('abort', cancel);
      if (!finished) {
        // The consumer stopped reading (or a message was refused): the
        // CANCELLED status our cancel causes is the end we asked for, not a
        // failure to report.
        stream.on('error', () => undefined);
        stream.cancel();
      }
    }
  }
}

/** `flightClient('grpc://127.0.0.1:8815')`: see FlightClient. */
export function flightClient(url: string, options: FlightClientOptions = {}): FlightClient {
  return FlightClient.connect(url, options);
}

function addressOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw new FlightError(
      'TWG_FLIGHT_URL_INVALID',
      `${JSON.stringify(url)} is not a URL`,
      {},
      { cause },
    );
  }
  if (parsed.protocol !== 'grpc:' && parsed.protocol !== 'grpc+tcp:') {
    throw new FlightError(
      'TWG_FLIGHT_URL_INVALID',
      `${url}: only grpc:// and grpc+tcp:// (plaintext) are supported, not ${parsed.protocol}//`,
    );
  }
  if (parsed.hostname === '' || parsed.port === '') {
    throw new FlightError('TWG_FLIGHT_URL_INVALID', `${url}: a host and a port are required`);
  }
  return `${parsed.hostname}:${parsed.port}`;
}

/** A ticket for error messages: its text when it is short printable UTF-8, else its size. */
function describeTicket(ticket: Uint8Array): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(ticket);
    // eslint-disable-next-line no-control-regex -- control characters make a ticket binary
    if (!/[\u0000-\u001f]/.test(text)) {
      return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
    }
  } catch {
    // not UTF-8: described by its size below
  }
  return `of ${ticket.byteLength} bytes`;
}
