import { MessageHeader, RecordBatchFileWriter, type RecordBatch } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import { schemaMessageFromFooter } from './footer-schema.js';
import { readIpcBatches, type DecodeOptions } from './ipc-batches.js';
import { IPC_FILE_TAIL, ipcLayout } from './ipc-file-layout.js';
import { scanIpcStream, type ScannedMessage } from './ipc-message-scan.js';
import { checkFooterBounds, type FileBlock } from './message-bounds.js';

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

/** Reads every batch of a segment (none for a file that holds none), checked as `decodeIpcStream` checks its one batch. */
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
 *
 * The messages are read in order, as a stream, by the same reader as
 * `decodeIpcStream`, after the footer is checked to list exactly them;
 * apache-arrow's file reader is not used (it invents an empty batch for a
 * file that holds none). A file whose writer put the schema only in the
 * footer gets a schema message built from it (footer-schema.ts).
 */
export function readIpcFileSegmentBlocks(
  bytes: Uint8Array,
  options: DecodeOptions = {},
): { batches: RecordBatch[]; blocks: IpcFileBlock[] } {
  const size = bytes.byteLength;
  const layout = ipcLayout(
    size,
    bytes.subarray(0, 8),
    bytes.subarray(Math.max(0, size - IPC_FILE_TAIL)),
  );
  if (layout.kind !== 'file') fail(0, 'not an Arrow IPC file (no leading ARROW1)');
  const footerAt = layout.regionEnd;
  const region = bytes.subarray(layout.regionStart, footerAt);
  const messages = scanIpcStream(region, layout.regionStart);
  // The footer must be in bounds and list exactly the messages the scan
  // checked, or the file says one thing to readers that follow its footer
  // and another to those that read it in order.
  const footer = bytes.subarray(footerAt, size - IPC_FILE_TAIL);
  const listed = checkFooterBounds(footer, footerAt);
  const scanned = (type: MessageHeader) => messages.filter((m) => m.headerType === type);
  sameBlocks(listed.dictionaries, scanned(MessageHeader.DictionaryBatch), 'dictionary', footerAt);
  sameBlocks(listed.recordBatches, scanned(MessageHeader.RecordBatch), 'record batch', footerAt);
  let stream: Uint8Array | Uint8Array[] = region;
  let all = messages;
  if (messages[0]?.headerType !== MessageHeader.Schema) {
    // The schema message, then the file's messages where they lie: joining
    // them would copy every byte of the file once more.
    const schema = schemaMessageFromFooter(footer, footerAt);
    stream = [schema, region];
    all = [...scanIpcStream(schema, footerAt), ...messages];
  }
  const batches = readIpcBatches(stream, all, options);
  const blocks = listed.recordBatches.map((b) => ({
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
      block.offset !== m.offset ||
      block.metaDataLength !== m.metadataLength ||
      block.bodyLength !== m.bodyLength
    ) {
      fail(footerAt, `footer ${what} block ${i} is not the message at byte ${m?.offset ?? 0}`);
    }
  });
}

function schemaKey(batch: RecordBatch): string {
  return batch.schema.fields
    .map((f) => `${f.name}: ${String(f.type)}${f.nullable ? '?' : ''}`)
    .join(', ');
}

function fail(offset: number, reason: string, cause?: unknown): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset }, cause);
}
