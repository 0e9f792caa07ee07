import {
  MessageHeader,
  RecordBatchFileReader,
  RecordBatchFileWriter,
  type RecordBatch,
} from 'apache-arrow';
import { checkDecodedBatch } from './decoded-batch-check.js';
import { ArrowBatchError } from './errors.js';
import { scanIpcStream, type ScannedMessage } from './ipc-message-scan.js';
import type { DecodeOptions } from './ipc-stream.js';
import { checkFooterBounds, type FileBlock } from './message-bounds.js';
import { assertSchemaMatches } from './schema-match.js';

/**
 * Arrow IPC file segments, for sinks that write files: `ARROW1`, padding,
 * the batches as stream messages, a footer indexing them, its i32 length,
 * `ARROW1`. The footer makes a segment randomly accessible and its trailing
 * magic makes a torn write detectable: a segment cut short anywhere fails to
 * read here, with the offset, instead of yielding fewer batches.
 *
 * The file sink owns durability (write, fsync, rename, directory fsync) and
 * naming (which span a segment holds); this is the byte format only.
 */
const MAGIC = 'ARROW1';
const HEAD = 8; // magic padded to 8
const TAIL = 10; // i32 footer length + magic

export function writeIpcFileSegment(batches: readonly RecordBatch[]): Uint8Array {
  const first = batches[0];
  if (first === undefined) {
    throw new ArrowBatchError('TWG_ARROW_BATCH_EMPTY', 'a file segment needs at least one batch');
  }
  const shape = schemaKey(first);
  batches.forEach((batch, i) => {
    if (schemaKey(batch) !== shape) {
      throw new ArrowBatchError(
        'TWG_ARROW_SCHEMA_MISMATCH',
        `batch ${i} has schema {${schemaKey(batch)}}, batch 0 has {${shape}}`,
      );
    }
  });
  return RecordBatchFileWriter.writeAll(batches).toUint8Array(true);
}

/** Reads every batch of a segment, checked as `decodeIpcStream` checks its one batch. */
export function readIpcFileSegment(bytes: Uint8Array, options: DecodeOptions = {}): RecordBatch[] {
  return readIpcFileSegmentBlocks(bytes, options).batches;
}

/** Where a record batch message lies in a file segment: `[offset, offset + length)`. */
export interface IpcFileBlock {
  readonly offset: number;
  /** Metadata and body together. */
  readonly length: number;
}

/**
 * `readIpcFileSegment`, with where each batch's message lies in the file (as
 * the footer lists them, checked against the messages): what a caller that
 * checksums each batch's bytes verifies.
 */
export function readIpcFileSegmentBlocks(
  bytes: Uint8Array,
  options: DecodeOptions = {},
): { batches: RecordBatch[]; blocks: IpcFileBlock[] } {
  if (bytes.byteLength < HEAD + TAIL || !hasMagic(bytes, 0)) {
    fail(0, 'not an Arrow IPC file (no leading ARROW1)');
  }
  if (!hasMagic(bytes, bytes.byteLength - MAGIC.length)) {
    fail(bytes.byteLength - MAGIC.length, 'no trailing ARROW1: the segment is truncated');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerLength = view.getInt32(bytes.byteLength - TAIL, true);
  const footerAt = bytes.byteLength - TAIL - footerLength;
  if (footerLength <= 0 || footerAt < HEAD) {
    fail(bytes.byteLength - TAIL, `footer length ${footerLength} does not fit the file`);
  }
  let messages: ScannedMessage[];
  try {
    messages = scanIpcStream(bytes.subarray(HEAD, footerAt));
  } catch (cause) {
    if (cause instanceof ArrowBatchError && cause.offset !== undefined) {
      fail(cause.offset + HEAD, cause.message, cause);
    }
    throw cause;
  }
  // apache-arrow reads the footer unverified and each batch where a footer
  // block points: the footer must be in bounds and list exactly the messages
  // the scan checked, or a corrupted footer hangs the reader on a huge vector
  // count, or yields batches that are not in the stream (or leaves some out).
  const footer = checkFooterBounds(bytes.subarray(footerAt, footerAt + footerLength), footerAt);
  const scanned = (type: MessageHeader) => messages.filter((m) => m.headerType === type);
  sameBlocks(footer.dictionaries, scanned(MessageHeader.DictionaryBatch), 'dictionary', footerAt);
  sameBlocks(footer.recordBatches, scanned(MessageHeader.RecordBatch), 'record batch', footerAt);
  let batches: RecordBatch[];
  try {
    batches = [...RecordBatchFileReader.from(bytes)];
  } catch (cause) {
    return fail(footerAt, `apache-arrow could not read the segment: ${String(cause)}`, cause);
  }
  for (const batch of batches) {
    if (options.expect !== undefined) assertSchemaMatches(batch.schema, options.expect);
    checkDecodedBatch(batch);
  }
  const blocks = footer.recordBatches.map((b) => ({
    offset: b.offset,
    length: b.metaDataLength + b.bodyLength,
  }));
  return { batches, blocks };
}

function sameBlocks(
  blocks: readonly FileBlock[],
  messages: readonly ScannedMessage[],
  what: string,
  footerAt: number,
): void {
  if (blocks.length !== messages.length) {
    fail(
      footerAt,
      `footer lists ${blocks.length} ${what} blocks, the file holds ${messages.length}`,
    );
  }
  blocks.forEach((block, i) => {
    const m = messages[i];
    if (
      m === undefined ||
      block.offset !== HEAD + m.offset ||
      block.metaDataLength !== m.metadataLength ||
      block.bodyLength !== m.bodyLength
    ) {
      fail(
        footerAt,
        `footer ${what} block ${i} is not the message at byte ${HEAD + (m?.offset ?? 0)}`,
      );
    }
  });
}

function schemaKey(batch: RecordBatch): string {
  return batch.schema.fields
    .map((f) => `${f.name}: ${String(f.type)}${f.nullable ? '?' : ''}`)
    .join(', ');
}

function hasMagic(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[at + i] !== MAGIC.charCodeAt(i)) return false;
  }
  return true;
}

function fail(offset: number, reason: string, cause?: unknown): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset }, cause);
}
