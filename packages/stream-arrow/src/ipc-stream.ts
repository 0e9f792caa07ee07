import {
  MessageHeader,
  RecordBatchReader,
  RecordBatchStreamWriter,
  type RecordBatch,
} from 'apache-arrow';
import type { BatchSchema } from './batch-schema.js';
import { checkDecodedBatch } from './decoded-batch-check.js';
import { ArrowBatchError } from './errors.js';
import { scanIpcStream } from './ipc-message-scan.js';
import { assertSchemaMatches } from './schema-match.js';

/**
 * One record batch per IPC stream message: a schema message, one record
 * batch, the end-of-stream marker. That is what the Zerobus Arrow path
 * ingests per call (exactly one non-empty batch), and it keeps a message
 * self-describing, so any Arrow reader decodes it alone.
 */
export function encodeIpcStream(batch: RecordBatch): Uint8Array {
  if (batch.numRows === 0) {
    throw new ArrowBatchError(
      'TWG_ARROW_BATCH_EMPTY',
      'a batch with no rows is not sent: sinks reject it, and it carries no record',
    );
  }
  return RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true);
}

export interface DecodeOptions {
  /** Refuse a batch whose schema is not exactly this one. */
  readonly expect?: BatchSchema;
}

/**
 * Decodes an IPC stream that holds exactly one record batch. Refused, each
 * with the byte offset or field where it goes wrong: bytes that are not IPC,
 * a stream with no batch or with several, dictionary batches (a batch schema
 * never has dictionaries), compressed bodies (decompress them first with
 * `@thalweg/wire-compression`), columns whose buffers do not hold their rows,
 * and, with `expect`, any difference from the expected schema.
 */
export function decodeIpcStream(bytes: Uint8Array, options: DecodeOptions = {}): RecordBatch {
  const messages = scanIpcStream(bytes);
  const first = messages[0];
  if (first?.headerType !== MessageHeader.Schema) {
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'the stream does not start with a schema', {
      offset: first?.offset ?? 0,
    });
  }
  // apache-arrow reads a batch with the latest schema before it, so a second
  // schema message would silently change how the batch's buffers are read.
  const schema = messages.find((m, i) => i > 0 && m.headerType === MessageHeader.Schema);
  if (schema !== undefined) {
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'a second schema message', {
      offset: schema.offset,
    });
  }
  const batches = messages.filter((m) => m.headerType === MessageHeader.RecordBatch);
  const dictionary = messages.find((m) => m.headerType === MessageHeader.DictionaryBatch);
  if (dictionary !== undefined) {
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'dictionary batches are not accepted', {
      offset: dictionary.offset,
    });
  }
  if (batches.length !== 1) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_BATCH_COUNT',
      `the stream holds ${batches.length} record batches, exactly 1 is accepted`,
      { offset: batches[1]?.offset ?? bytes.byteLength },
    );
  }
  const compressed = messages.find((m) => m.compressed);
  if (compressed !== undefined) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_COMPRESSED',
      'the batch body is compressed: run decompressIpcStream from @thalweg/wire-compression first',
      { offset: compressed.offset },
    );
  }
  const batch = readOnly(bytes);
  if (options.expect !== undefined) assertSchemaMatches(batch.schema, options.expect);
  checkDecodedBatch(batch);
  return batch;
}

function readOnly(bytes: Uint8Array): RecordBatch {
  try {
    const [batch] = [...RecordBatchReader.from(bytes)];
    if (batch === undefined) throw new Error('no batch read');
    return batch;
  } catch (cause) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_INVALID',
      `apache-arrow could not read the batch: ${cause instanceof Error ? cause.message : String(cause)}`,
      {},
      cause,
    );
  }
}
