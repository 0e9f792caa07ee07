import { MessageHeader, RecordBatchReader, type RecordBatch, type Schema } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import { readIpcBatches, type DecodeOptions } from './ipc-batches.js';
import { scanIpcStream } from './ipc-message-scan.js';
import { writeIpcStream } from './ipc-stream-writer.js';

export type { DecodeOptions } from './ipc-batches.js';

/**
 * One record batch per IPC stream message: a schema message, one record
 * batch, the end-of-stream marker. That is what the Zerobus Arrow path
 * ingests per call (exactly one non-empty batch), and it keeps a message
 * self-describing, so any Arrow reader decodes it alone. The bytes are
 * apache-arrow's stream writer's, in one allocation of their own
 * (`writeIpcStream`).
 */
export function encodeIpcStream(batch: RecordBatch): Uint8Array<ArrayBuffer> {
  if (batch.numRows === 0) {
    throw new ArrowBatchError(
      'TWG_ARROW_BATCH_EMPTY',
      'a batch with no rows is not sent: sinks reject it, and it carries no record',
    );
  }
  return writeIpcStream(batch);
}

/**
 * Decodes an IPC stream that holds exactly one record batch (and any
 * dictionary batches it needs). Refused, each with the byte offset or field
 * where it goes wrong: bytes that are not IPC (TWG_ARROW_IPC_INVALID), a
 * stream with no batch or with several, valid Arrow of a type this reader
 * does not read (TWG_ARROW_IPC_UNSUPPORTED), compressed bodies without
 * `codecs`, columns whose buffers do not hold their rows, and, with
 * `expect`, any difference from the expected schema.
 */
export function decodeIpcStream(bytes: Uint8Array, options: DecodeOptions = {}): RecordBatch {
  const messages = scanIpcStream(bytes);
  const batches = messages.filter((m) => m.headerType === MessageHeader.RecordBatch);
  if (messages[0]?.headerType === MessageHeader.Schema && batches.length !== 1) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_BATCH_COUNT',
      `the stream holds ${batches.length} record batches, exactly 1 is accepted`,
      { offset: batches[1]?.offset ?? bytes.byteLength },
    );
  }
  const [batch] = readIpcBatches(bytes, messages, options);
  if (batch === undefined) throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'no batch read');
  return batch;
}

/**
 * The schema of an IPC stream that holds a schema message and no batch
 * (what a reader that takes a file a message at a time starts from), checked
 * as `decodeIpcStream` checks one: bounds, framing, types it does not read
 * (TWG_ARROW_IPC_UNSUPPORTED). Any batch in the stream is refused.
 */
export function decodeIpcSchema(bytes: Uint8Array): Schema {
  const messages = scanIpcStream(bytes);
  const batch = messages.find((m) => m.headerType !== MessageHeader.Schema);
  if (batch !== undefined) {
    throw new ArrowBatchError('TWG_ARROW_IPC_BATCH_COUNT', 'a schema-only stream holds a batch', {
      offset: batch.offset,
    });
  }
  readIpcBatches(bytes, messages, {});
  try {
    return RecordBatchReader.from(bytes).open().schema;
  } catch (cause) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_INVALID',
      `apache-arrow could not read the schema: ${cause instanceof Error ? cause.message : String(cause)}`,
      { offset: 0 },
      cause,
    );
  }
}
