import { MessageHeader, RecordBatchReader, Schema, type RecordBatch } from 'apache-arrow';
import type { BatchSchema } from './batch-schema.js';
import { checkDecodedBatch } from './decoded-batch-check.js';
import { ArrowBatchError } from './errors.js';
import {
  compressMessage,
  decompressMessage,
  writeIpcMessages,
  type IpcBodyCodecs,
  type IpcBodyEncoder,
} from './ipc-body-compression.js';
import { scanIpcStream, type ScannedMessage } from './ipc-message-scan.js';
import { assertSchemaMatches } from './schema-match.js';

export interface DecodeOptions {
  /** Refuse a batch whose schema is not exactly this one. */
  readonly expect?: BatchSchema;
  /**
   * Codecs for compressed bodies (`ipcBodyCodecs` of @thalweg/wire-compression);
   * without them a compressed batch is refused with TWG_ARROW_IPC_COMPRESSED.
   */
  readonly codecs?: IpcBodyCodecs;
  /** The most uncompressed body bytes one compressed message may declare. Default 1 GiB. */
  readonly maxDecompressedBytes?: number;
}

/**
 * The batches of checked IPC stream bytes (`messages` is their scan: one
 * schema first, then dictionary and record batches), each checked in full.
 * The stream may come as chunks, each holding whole messages (a file whose
 * schema is only in its footer: the schema message, then the file's
 * messages in place), so that nothing is copied to join them.
 * Compressed bodies are decompressed first, so apache-arrow only ever reads
 * plain bodies whose every length was checked.
 */
export function readIpcBatches(
  bytes: Uint8Array | readonly Uint8Array[],
  messages: readonly ScannedMessage[],
  options: DecodeOptions,
): RecordBatch[] {
  checkMessageOrder(messages);
  let plain: Uint8Array | readonly Uint8Array[] = bytes;
  const compressed = messages.find((m) => m.compressed);
  if (compressed !== undefined) {
    const codecs = options.codecs;
    if (codecs === undefined) {
      throw new ArrowBatchError(
        'TWG_ARROW_IPC_COMPRESSED',
        'the batch body is compressed: pass `codecs` (ipcBodyCodecs of @thalweg/wire-compression)',
        { offset: compressed.offset },
      );
    }
    const limit = options.maxDecompressedBytes;
    plain = writeIpcMessages(
      messages.map((m) =>
        decompressMessage(
          m,
          limit === undefined ? { codecs } : { codecs, maxDecompressedBytes: limit },
        ),
      ),
    );
  }
  const wanted = messages.filter((m) => m.headerType === MessageHeader.RecordBatch).length;
  const batches = wanted === 0 ? [] : readAll(plain);
  if (batches.length !== wanted) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_INVALID',
      `apache-arrow read ${batches.length} record batches of the ${wanted} in the stream`,
    );
  }
  return batches.map((read) => {
    const batch = withOwnSchema(read);
    if (options.expect !== undefined) assertSchemaMatches(batch.schema, options.expect);
    checkDecodedBatch(batch);
    return batch;
  });
}

/** The stream's messages with every batch body decompressed (a stream without any is returned as is). */
export function decompressIpcBodies(
  bytes: Uint8Array,
  options: { readonly codecs: IpcBodyCodecs; readonly maxDecompressedBytes?: number },
): Uint8Array {
  const messages = scanIpcStream(bytes);
  if (!messages.some((m) => m.compressed)) return bytes;
  return writeIpcMessages(messages.map((m) => decompressMessage(m, options)));
}

/** The stream's messages with every batch body compressed by `encoder`. */
export function compressIpcBodies(bytes: Uint8Array, encoder: IpcBodyEncoder): Uint8Array {
  return writeIpcMessages(scanIpcStream(bytes).map((m) => compressMessage(m, encoder)));
}

/**
 * One schema, first: apache-arrow reads a batch with the latest schema
 * before it, so a second schema message would silently change how the
 * batch's buffers are read.
 */
function checkMessageOrder(messages: readonly ScannedMessage[]): void {
  const first = messages[0];
  if (first?.headerType !== MessageHeader.Schema) {
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'the stream does not start with a schema', {
      offset: first?.offset ?? 0,
    });
  }
  const schema = messages.find((m, i) => i > 0 && m.headerType === MessageHeader.Schema);
  if (schema !== undefined) {
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'a second schema message', {
      offset: schema.offset,
    });
  }
}

function readAll(bytes: Uint8Array | readonly Uint8Array[]): RecordBatch[] {
  try {
    // Chunks are read in place: apache-arrow's byte stream takes any iterable of views.
    return [...RecordBatchReader.from(bytes instanceof Uint8Array ? bytes : [...bytes])];
  } catch (cause) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_INVALID',
      `apache-arrow could not read the batch: ${cause instanceof Error ? cause.message : String(cause)}`,
      {},
      cause,
    );
  }
}

/**
 * apache-arrow's RecordBatch merges its schema's fields by name
 * (`Schema.assign`), so of two fields of one name the second's type is
 * reported for both while the first column holds its own data. The fields
 * the batch's data was read with are the stream's, in order: the batch is
 * given a schema of exactly those (columns by index, never by name).
 */
function withOwnSchema(batch: RecordBatch): RecordBatch {
  const fields = batch.data.type.children;
  const same = fields.every((f, i) => f === batch.schema.fields[i]);
  if (same && fields.length === batch.schema.fields.length) return batch;
  const s = batch.schema;
  // The RecordBatch constructor would merge by name again; the schema
  // property is a plain field set once there.
  (batch as { schema: Schema }).schema = new Schema(
    fields,
    s.metadata,
    s.dictionaries,
    s.metadataVersion,
  );
  return batch;
}
