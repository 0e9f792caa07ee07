import { RecordBatchStreamWriter, type RecordBatch, type Schema } from 'apache-arrow';
import {
  ArrowBatchError,
  MessageHeader,
  decodeIpcSchema,
  decodeIpcStream,
  decodeMessageHeader,
  encodeIpcStream,
  frameIpcMessage,
  IPC_MESSAGE_PREFIX,
  scanIpcStream,
} from '@thalweg/stream-arrow';
import { FlightError, reasonOf } from './errors.js';
import type { FlightData, FlightDescriptor } from './flight-messages.js';

/**
 * Flight carries an Arrow IPC stream cut into its messages: each FlightData
 * holds one message's `Message` flatbuffer (data_header, without the
 * continuation marker and length prefix) and its body (data_body). Reading
 * puts each back into IPC stream framing — 0xFFFFFFFF, the int32 metadata
 * length, the flatbuffer padded to 8 bytes, the body — and hands it to
 * stream-arrow's one bounds-checked reader (ADR 0021) behind the stream's
 * schema message, so no byte reaches apache-arrow unchecked and no second
 * IPC parser exists. Writing is the reverse, from stream-arrow's encoder.
 */

const EMPTY: Uint8Array = new Uint8Array(0);

/** One FlightData as an IPC stream message: marker, length, header padded to 8, body. */
export function ipcMessageOf(data: FlightData): Uint8Array {
  return frameIpcMessage(data.dataHeader, data.dataBody);
}

/** The first FlightData of a DoGet or DoPut stream: the schema message (and, on DoPut, the descriptor). */
export function schemaFlightData(schema: Schema, descriptor?: FlightDescriptor): FlightData {
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, schema);
  writer.close();
  const [message] = scanIpcStream(writer.toUint8Array(true));
  if (message?.headerType !== MessageHeader.Schema) {
    throw new FlightError('TWG_FLIGHT_MISUSE', 'apache-arrow wrote no schema message');
  }
  return { descriptor, dataHeader: message.metadata, appMetadata: EMPTY, dataBody: EMPTY };
}

/**
 * One record batch as FlightData, encoded by stream-arrow's `encodeIpcStream`
 * and split into header and body. `schemaHeader` is the data_header of the
 * stream's schema message: a batch of any other schema is refused, since the
 * peer reads every batch with the first schema.
 */
export function batchFlightData(
  batch: RecordBatch,
  schemaHeader: Uint8Array,
  appMetadata: Uint8Array,
): FlightData {
  const messages = scanIpcStream(encodeIpcStream(batch));
  const [schema, ...rest] = messages;
  if (schema === undefined || !sameBytes(schema.metadata, schemaHeader)) {
    throw new FlightError(
      'TWG_FLIGHT_MISUSE',
      'the batch has another schema than the one the stream was opened with',
    );
  }
  if (rest.some((m) => m.headerType === MessageHeader.DictionaryBatch)) {
    throw new FlightError('TWG_FLIGHT_UNSUPPORTED', 'dictionary-encoded columns are not sent');
  }
  const record = rest.find((m) => m.headerType === MessageHeader.RecordBatch);
  if (record === undefined)
    throw new FlightError('TWG_FLIGHT_MISUSE', 'the batch encoded to no record batch');
  return { dataHeader: record.metadata, appMetadata, dataBody: record.body };
}

/**
 * Reads the FlightData of one call in order: the first must carry the
 * schema; each after it one record batch, checked in full. `call` names the
 * call in errors (`DoGet ticket "…"`); every refusal names the message
 * index and the byte position in the IPC stream the messages make up.
 */
export class FlightBatchReader {
  private schemaMessage: Uint8Array | undefined;
  private index = 0;
  private position = 0;

  constructor(private readonly call: string) {}

  /** The stream's schema, once its first message has been read. */
  schema: Schema | undefined;

  /** The batch `data` carries, or `undefined` for the schema message. */
  read(data: FlightData): RecordBatch | undefined {
    const index = this.index;
    const at = this.position;
    this.index += 1;
    if (data.dataHeader.byteLength === 0) {
      throw new FlightError(
        'TWG_FLIGHT_UNSUPPORTED',
        'a FlightData without data_header (app_metadata alone) is not read',
        { call: this.call, message: index, offset: at },
      );
    }
    const message = ipcMessageOf(data);
    this.position += message.byteLength;
    const header = this.checked(
      index,
      () => decodeMessageHeader(data.dataHeader, IPC_MESSAGE_PREFIX),
      at,
      0,
    );
    if (this.schemaMessage === undefined) {
      if (header.headerType !== MessageHeader.Schema) {
        this.invalid(index, at, 'the first message is not a schema');
      }
      this.schema = this.checked(index, () => decodeIpcSchema(message), at, 0);
      this.schemaMessage = message;
      return undefined;
    }
    if (header.headerType === MessageHeader.Schema)
      this.invalid(index, at, 'a second schema message');
    if (header.headerType === MessageHeader.DictionaryBatch) {
      throw new FlightError('TWG_FLIGHT_UNSUPPORTED', 'dictionary batches are not read', {
        call: this.call,
        message: index,
        offset: at,
      });
    }
    if (header.bodyLength !== data.dataBody.byteLength) {
      this.invalid(
        index,
        at,
        `data_body holds ${data.dataBody.byteLength} bytes, the header declares ${header.bodyLength}`,
      );
    }
    const schemaMessage = this.schemaMessage;
    const bytes = new Uint8Array(schemaMessage.byteLength + message.byteLength);
    bytes.set(schemaMessage, 0);
    bytes.set(message, schemaMessage.byteLength);
    return this.checked(index, () => decodeIpcStream(bytes), at, schemaMessage.byteLength);
  }

  /** Runs the reader; its refusal is ours, its offset moved from `bytes` to the stream. */
  private checked<T>(index: number, run: () => T, at: number, lead: number): T {
    try {
      return run();
    } catch (cause) {
      if (!(cause instanceof ArrowBatchError)) throw cause;
      const inMessage = cause.offset === undefined ? 0 : cause.offset - lead;
      const code =
        cause.code === 'TWG_ARROW_IPC_UNSUPPORTED' || cause.code === 'TWG_ARROW_IPC_COMPRESSED'
          ? 'TWG_FLIGHT_UNSUPPORTED'
          : 'TWG_FLIGHT_DATA_INVALID';
      throw new FlightError(
        code,
        reasonOf(cause),
        {
          call: this.call,
          message: index,
          offset: cause.offset !== undefined && inMessage < 0 ? cause.offset : at + inMessage,
        },
        { cause },
      );
    }
  }

  private invalid(index: number, at: number, reason: string): never {
    throw new FlightError('TWG_FLIGHT_DATA_INVALID', reason, {
      call: this.call,
      message: index,
      offset: at,
    });
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
}
