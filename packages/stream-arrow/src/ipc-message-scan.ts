import { Message, MessageHeader } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import { checkMessageBounds } from './message-bounds.js';

/**
 * The one walk over Arrow IPC messages in thalweg: it checks the framing
 * before apache-arrow reads a byte of it, so that garbage, truncation and
 * lengths that do not fit are reported with the byte offset where they are
 * rather than as whatever a reader happens to throw (or silently returns,
 * or allocates) on them. The stream and file readers here, the file source
 * and the body (de)compression of @thalweg/wire-compression all frame
 * messages through it.
 *
 * Framing: a 0xFFFFFFFF continuation marker and an i32 metadata length (or,
 * before Arrow 0.15, the bare length), the `Message` flatbuffer, then its
 * body; a zero length ends the stream.
 */
export interface MessageInfo {
  /** Where the message (its marker or length) starts. */
  readonly offset: number;
  readonly headerType: MessageHeader;
  readonly bodyLength: number;
  /** A record batch's row count (a dictionary batch's entries); 0 for a schema. */
  readonly rows: number;
  /** The body compression of a batch (Message.fbs `BodyCompression`), if any. */
  readonly compression: { readonly codec: number; readonly method: number } | undefined;
  /** A batch's buffer regions, relative to its body (checked to lie inside it). */
  readonly buffers: readonly { readonly offset: number; readonly length: number }[];
}

export interface ScannedMessage extends MessageInfo {
  /** Bytes from `offset` to the body: the marker and length prefix and the metadata. */
  readonly metadataLength: number;
  /** The `Message` flatbuffer, without its prefix. */
  readonly metadata: Uint8Array;
  readonly bodyOffset: number;
  readonly body: Uint8Array;
  /** A batch whose body uses IPC body compression. */
  readonly compressed: boolean;
}

export type MessagePrefix =
  | { readonly kind: 'end'; readonly prefixLength: number }
  | { readonly kind: 'message'; readonly prefixLength: number; readonly metadataLength: number };

/** Bytes to have at a message start to know its prefix (fewer only near the end). */
export const MESSAGE_PREFIX_BYTES = 8;

/**
 * The prefix of the message at `at`, from the (up to 8) bytes there; `left`
 * is how many bytes the messages have from `at` on. Every length is checked
 * against `left` before anyone allocates by it.
 */
export function readMessagePrefix(bytes: Uint8Array, at: number, left: number): MessagePrefix {
  if (left < 4) fail(at, `${left} trailing bytes are not an IPC message`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let prefixLength = 4;
  let length = view.getInt32(0, true);
  if (length === -1) {
    if (left < 8) fail(at, 'continuation marker without a metadata length');
    length = view.getInt32(4, true);
    prefixLength = 8;
  }
  if (length === 0) {
    if (left > prefixLength) {
      fail(at + prefixLength, `${left - prefixLength} bytes after the end-of-stream marker`);
    }
    return { kind: 'end', prefixLength };
  }
  if (length < 0 || length > left - prefixLength) {
    fail(at, `metadata length ${length} does not fit the ${left - prefixLength} bytes left`);
  }
  return { kind: 'message', prefixLength, metadataLength: length };
}

export function scanIpcStream(bytes: Uint8Array, base = 0): ScannedMessage[] {
  const messages: ScannedMessage[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    // (the end-of-stream marker is optional)
    const prefix = readMessagePrefix(
      bytes.subarray(at, at + MESSAGE_PREFIX_BYTES),
      base + at,
      bytes.byteLength - at,
    );
    if (prefix.kind === 'end') break;
    const metadataAt = at + prefix.prefixLength;
    const metadata = bytes.subarray(metadataAt, metadataAt + prefix.metadataLength);
    const info = decodeMessageHeader(metadata, base + at);
    const bodyOffset = metadataAt + prefix.metadataLength;
    if (info.bodyLength > bytes.byteLength - bodyOffset) {
      fail(
        base + at,
        `body of ${info.bodyLength} bytes does not fit the ${bytes.byteLength - bodyOffset} left`,
      );
    }
    messages.push({
      ...info,
      metadataLength: prefix.prefixLength + prefix.metadataLength,
      metadata,
      bodyOffset: base + bodyOffset,
      body: bytes.subarray(bodyOffset, bodyOffset + info.bodyLength),
      compressed: info.compression !== undefined,
    });
    at = bodyOffset + info.bodyLength;
  }
  return messages;
}

/**
 * A message's `Message` flatbuffer, bounds-checked (message-bounds.ts) and
 * then decoded by apache-arrow; `offset` is where the message starts.
 */
export function decodeMessageHeader(metadata: Uint8Array, offset: number): MessageInfo {
  checkMessageBounds(metadata, offset);
  let message: Message<MessageHeader>;
  let batch: BatchHeader | undefined;
  try {
    message = Message.decode(metadata);
    // A batch message without its RecordBatch table decodes to null.
    batch =
      (message.isRecordBatch()
        ? message.header()
        : message.isDictionaryBatch()
          ? message.header().data
          : undefined) ?? undefined;
  } catch (cause) {
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
  if (headerType === MessageHeader.Schema && bodyLength !== 0) {
    fail(offset, 'a schema message with a body');
  }
  if (batch === undefined && headerType !== MessageHeader.Schema) {
    fail(offset, 'a batch message without its RecordBatch table');
  }
  if (batch === undefined) {
    return { offset, headerType, bodyLength, rows: 0, compression: undefined, buffers: [] };
  }
  checkBatchShape(batch, bodyLength, offset);
  const c = batch.compression;
  return {
    offset,
    headerType,
    bodyLength,
    rows: batch.length,
    compression: c == null ? undefined : { codec: c.type, method: c.method },
    buffers: batch.buffers.map((b) => ({ offset: b.offset, length: b.length })),
  };
}

/**
 * apache-arrow sizes allocations by the declared row count (a batch whose
 * columns are shorter than it gets null bitmaps backfilled to its length),
 * so a corrupted count could exhaust memory before anything else is checked.
 * Every column type but `null` needs at least one bit of body per row (a
 * boolean's data bitmap is the smallest), which bounds a count by the body
 * length; a floor of 2^20 rows lets a batch of only null columns, which has
 * no body, hold a million rows (their backfilled bitmaps are 128 KiB each).
 * Buffer regions must lie within the body.
 */
const MIN_ROW_BOUND = 1 << 20;

function checkBatchShape(batch: BatchHeader, bodyLength: number, offset: number): void {
  const maxRows = Math.max(8 * bodyLength + 8, MIN_ROW_BOUND);
  // apache-arrow's writer writes a null count it has not computed as -1
  // (its "unknown"), which its reader then counts from the bitmap.
  const counts = [
    batch.length,
    ...batch.nodes.flatMap((n) => [n.length, n.nullCount === -1 ? 0 : n.nullCount]),
  ];
  const bad = counts.find((n) => !Number.isSafeInteger(n) || n < 0 || n > maxRows);
  if (bad !== undefined)
    fail(offset, `a count of ${bad} rows does not fit a body of ${bodyLength} bytes`);
  for (const region of batch.buffers) {
    if (
      !Number.isSafeInteger(region.offset) ||
      !Number.isSafeInteger(region.length) ||
      region.offset < 0 ||
      region.length < 0 ||
      region.offset + region.length > bodyLength
    ) {
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
  readonly compression: { readonly type: number; readonly method: number } | null;
}

function fail(offset: number, reason: string, cause?: unknown): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset }, cause);
}
