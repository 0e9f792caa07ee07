import { Message, MessageHeader } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import { checkMessageBounds } from './message-bounds.js';

/**
 * A walk over the messages of an Arrow IPC stream that checks the framing
 * before apache-arrow reads it, so that garbage, truncation and a wrong
 * number of batches are reported with the byte offset where they are rather
 * than as whatever a reader happens to throw (or silently returns) on them.
 *
 * Framing: a 0xFFFFFFFF continuation marker and an i32 metadata length (or,
 * before Arrow 0.15, the bare length), the `Message` flatbuffer, then its
 * body; a zero length ends the stream.
 */
export interface ScannedMessage {
  readonly offset: number;
  /** Bytes from `offset` to the body: the marker and length prefix and the metadata. */
  readonly metadataLength: number;
  readonly headerType: MessageHeader;
  readonly bodyLength: number;
  /** A batch whose body uses IPC body compression. */
  readonly compressed: boolean;
}

export function scanIpcStream(bytes: Uint8Array): ScannedMessage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const messages: ScannedMessage[] = [];
  let at = 0;
  for (;;) {
    const left = bytes.byteLength - at;
    if (left === 0) break; // the end-of-stream marker is optional
    if (left < 4) fail(at, `${left} trailing bytes are not an IPC message`);
    let prefix = 4;
    let length = view.getInt32(at, true);
    if (length === -1) {
      if (left < 8) fail(at, 'continuation marker without a metadata length');
      length = view.getInt32(at + 4, true);
      prefix = 8;
    }
    if (length === 0) {
      if (left > prefix) fail(at + prefix, `${left - prefix} bytes after the end-of-stream marker`);
      break;
    }
    if (length < 0 || length > left - prefix) {
      fail(at, `metadata length ${length} does not fit the ${left - prefix} bytes left`);
    }
    const scanned = decodeMessage(bytes.subarray(at + prefix, at + prefix + length), at);
    const bodyAt = at + prefix + length;
    if (scanned.bodyLength > bytes.byteLength - bodyAt) {
      fail(
        at,
        `body of ${scanned.bodyLength} bytes does not fit the ${bytes.byteLength - bodyAt} left`,
      );
    }
    messages.push({ ...scanned, metadataLength: prefix + length });
    at = bodyAt + scanned.bodyLength;
  }
  return messages;
}

function decodeMessage(
  metadata: Uint8Array,
  offset: number,
): Omit<ScannedMessage, 'metadataLength'> {
  let message: Message<MessageHeader>;
  let compressed = false;
  checkMessageBounds(metadata, offset);
  try {
    message = Message.decode(metadata);
    const batch = message.isRecordBatch()
      ? message.header()
      : message.isDictionaryBatch()
        ? message.header().data
        : undefined;
    if (batch !== undefined) {
      compressed = batch.compression != null;
      checkBatchShape(batch, message.bodyLength, offset);
    }
  } catch (cause) {
    if (cause instanceof ArrowBatchError) throw cause;
    return fail(offset, 'metadata is not an Arrow Message flatbuffer', cause);
  }
  const headerType = message.headerType;
  const bodyLength = message.bodyLength;
  if (
    headerType !== MessageHeader.Schema &&
    headerType !== MessageHeader.RecordBatch &&
    headerType !== MessageHeader.DictionaryBatch
  ) {
    fail(offset, `message header type ${String(headerType)} is not a schema or a batch`);
  }
  if (!Number.isSafeInteger(bodyLength) || bodyLength < 0) {
    fail(offset, `body length ${bodyLength} is invalid`);
  }
  return { offset, headerType, bodyLength, compressed };
}

/**
 * apache-arrow sizes allocations by the declared row count (a batch whose
 * columns are shorter than it gets null bitmaps backfilled to its length),
 * so a corrupted count could exhaust memory before anything else is checked.
 * Every column type a batch schema allows needs at least one bit of body per
 * row (a boolean's data bitmap is the smallest), which bounds every count by
 * the body length; buffer regions must lie within the body.
 */
function checkBatchShape(batch: BatchHeader, bodyLength: number, offset: number): void {
  const maxRows = 8 * bodyLength + 8;
  const counts = [batch.length, ...batch.nodes.flatMap((n) => [n.length, n.nullCount])];
  const bad = counts.find((n) => !Number.isSafeInteger(n) || n < 0 || n > maxRows);
  if (bad !== undefined)
    fail(offset, `a count of ${bad} rows does not fit a body of ${bodyLength} bytes`);
  for (const region of batch.buffers) {
    if (region.offset < 0 || region.length < 0 || region.offset + region.length > bodyLength) {
      fail(
        offset,
        `buffer ${region.offset}+${region.length} lies outside the ${bodyLength}-byte body`,
      );
    }
  }
}

interface BatchHeader {
  readonly length: number;
  readonly nodes: readonly { readonly length: number; readonly nullCount: number }[];
  readonly buffers: readonly { readonly offset: number; readonly length: number }[];
}

function fail(offset: number, reason: string, cause?: unknown): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset }, cause);
}
