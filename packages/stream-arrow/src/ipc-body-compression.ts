import { MessageHeader } from 'apache-arrow';
import { pad8, rewriteRecordBatch, type BufferRegion } from './batch-table-rewrite.js';
import { ArrowBatchError } from './errors.js';
import { END_OF_STREAM, framedMetadataBytes, writeFramedMetadata } from './ipc-message-framing.js';
import type { ScannedMessage } from './ipc-message-scan.js';

/**
 * Arrow IPC body compression (Message.fbs `BodyCompression`, method BUFFER):
 * each non-empty buffer of a record or dictionary batch body is an i64
 * little-endian uncompressed length followed by the codec's frame, or by the
 * raw bytes when that length is -1 (the writer found compression did not
 * pay). Empty buffers stay empty, without a prefix. Codecs: 0 = LZ4_FRAME,
 * 1 = ZSTD.
 *
 * The format is read and written here, next to the one message walk; the
 * codecs themselves are passed in (`IpcBodyCodecs`, which
 * @thalweg/wire-compression provides), so that this package carries no
 * native compression library and wire-compression can frame IPC with this
 * package's reader without a dependency cycle (ADR 0021).
 */
export type IpcCodecName = 'lz4-frame' | 'zstd';

export const IPC_CODEC = { 'lz4-frame': 0, zstd: 1 } as const;

export interface IpcBodyCodecs {
  /**
   * One buffer's frame, decompressed. `length` is the uncompressed length
   * the buffer declares; `limit` bounds the output (the frame may claim
   * more). The result must be exactly `length` bytes (it is checked); a
   * frame that does not decompress throws.
   */
  decompress(codec: IpcCodecName, frame: Uint8Array, length: number, limit: number): Uint8Array;
}

export interface IpcBodyEncoder {
  readonly codec: IpcCodecName;
  compress(plain: Uint8Array): Uint8Array;
}

export interface IpcDecompressOptions {
  readonly codecs: IpcBodyCodecs;
  /** The most uncompressed body bytes one message may declare. Default 1 GiB. */
  readonly maxDecompressedBytes?: number;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 1 << 30;
const CODEC_NAME: Readonly<Record<number, IpcCodecName>> = { 0: 'lz4-frame', 1: 'zstd' };
const METHOD_BUFFER = 0;
const NOT_COMPRESSED = -1n;

/** The codec of a compressed batch message, refused as unsupported when it is not one of Arrow's. */
export function ipcCodecOf(message: ScannedMessage): IpcCodecName | undefined {
  const c = message.compression;
  if (c === undefined) return undefined;
  if (c.method !== METHOD_BUFFER) {
    unsupported(message.offset, `body compression method ${c.method} (only BUFFER, 0, is defined)`);
  }
  const name = CODEC_NAME[c.codec];
  if (name === undefined) unsupported(message.offset, `body compression codec ${c.codec}`);
  return name;
}

/**
 * The message with its body decompressed, laid out 8-byte aligned, and its
 * BodyCompression removed: what apache-arrow reads without a codec. The
 * declared lengths are checked against the limit before anything is
 * decompressed or allocated.
 */
export function decompressMessage(
  message: ScannedMessage,
  options: IpcDecompressOptions,
): { metadata: Uint8Array; body: Uint8Array } {
  const codec = ipcCodecOf(message);
  if (codec === undefined) return message;
  const limit = options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  const declared = declaredLengths(message);
  let total = 0;
  message.buffers.forEach((region, i) => {
    const length = declared[i] ?? 0n;
    total += pad8(length === NOT_COMPRESSED ? region.length - 8 : Number(length));
  });
  if (total > limit) {
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_TOO_LARGE',
      `batch body declares ${total} uncompressed bytes, above the limit of ${limit}`,
      { offset: message.offset },
    );
  }
  const body = new Uint8Array(total);
  const regions: BufferRegion[] = [];
  let at = 0;
  message.buffers.forEach((region, i) => {
    const length = declared[i] ?? 0n;
    const payload = message.body.subarray(region.offset + 8, region.offset + region.length);
    const where = message.bodyOffset + region.offset;
    let plain: Uint8Array;
    if (region.length === 0 || length === 0n) plain = payload.subarray(0, 0);
    else if (length === NOT_COMPRESSED) plain = payload;
    else plain = decode(options.codecs, codec, payload, Number(length), limit, where);
    body.set(plain, at);
    regions.push({ offset: at, length: plain.byteLength });
    at += pad8(plain.byteLength);
  });
  const metadata = rewriteRecordBatch(
    message.metadata,
    message.headerType,
    message.offset,
    regions,
    undefined,
    total,
  );
  return { metadata, body };
}

/**
 * The message with each non-empty buffer compressed by `encoder`, or stored
 * raw behind a -1 length when its frame would not be smaller, as the format
 * allows. Messages other than batches are returned as they are.
 */
export function compressMessage(
  message: ScannedMessage,
  encoder: IpcBodyEncoder,
): { metadata: Uint8Array; body: Uint8Array } {
  if (
    message.headerType !== MessageHeader.RecordBatch &&
    message.headerType !== MessageHeader.DictionaryBatch
  ) {
    return message;
  }
  if (message.compressed) invalid(message.offset, 'batch body is already compressed');
  const parts: Uint8Array[] = [];
  const regions: BufferRegion[] = [];
  let at = 0;
  for (const region of message.buffers) {
    const plain = message.body.subarray(region.offset, region.offset + region.length);
    const stored = plain.byteLength === 0 ? plain : prefixed(encoder, plain);
    parts.push(stored);
    regions.push({ offset: at, length: stored.byteLength });
    at += pad8(stored.byteLength);
  }
  const body = new Uint8Array(at);
  regions.forEach((r, i) => body.set(parts[i] ?? new Uint8Array(0), r.offset));
  const compression = { codec: IPC_CODEC[encoder.codec], method: METHOD_BUFFER };
  const metadata = rewriteRecordBatch(
    message.metadata,
    message.headerType,
    message.offset,
    regions,
    compression,
    at,
  );
  return { metadata, body };
}

/**
 * Frames messages as a modern IPC stream ending with the end-of-stream
 * marker. Metadata is padded to 8 bytes here; a body is written as given, so
 * its length must be the `bodyLength` its metadata states.
 */
export function writeIpcMessages(
  messages: readonly { readonly metadata: Uint8Array; readonly body: Uint8Array }[],
): Uint8Array {
  let total = END_OF_STREAM.byteLength;
  for (const m of messages) total += framedMetadataBytes(m.metadata.byteLength) + m.body.byteLength;
  const out = new Uint8Array(total);
  let at = 0;
  for (const m of messages) {
    at = writeFramedMetadata(out, at, m.metadata);
    out.set(m.body, at);
    at += m.body.byteLength;
  }
  out.set(END_OF_STREAM, at);
  return out;
}

/** The i64 prefix of every non-empty buffer: its uncompressed length, or -1 (stored raw). */
function declaredLengths(message: ScannedMessage): bigint[] {
  const body = message.body;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  return message.buffers.map((region, i) => {
    if (region.length === 0) return 0n;
    const at = message.bodyOffset + region.offset;
    if (region.length < 8) invalid(at, `buffer ${i} (${region.length} bytes) has no length prefix`);
    const length = view.getBigInt64(region.offset, true);
    if (length < NOT_COMPRESSED || length > BigInt(Number.MAX_SAFE_INTEGER)) {
      invalid(at, `buffer ${i} declares length ${length}`);
    }
    return length;
  });
}

function decode(
  codecs: IpcBodyCodecs,
  codec: IpcCodecName,
  frame: Uint8Array,
  length: number,
  limit: number,
  offset: number,
): Uint8Array {
  let out: Uint8Array;
  try {
    out = codecs.decompress(codec, frame, length, limit);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ArrowBatchError(
      'TWG_ARROW_IPC_INVALID',
      `IPC body buffer: ${reason}`,
      { offset },
      cause,
    );
  }
  if (out.byteLength !== length) {
    invalid(
      offset,
      `buffer declares ${length} uncompressed bytes, its ${codec} frame holds ${out.byteLength}`,
    );
  }
  return out;
}

function prefixed(encoder: IpcBodyEncoder, plain: Uint8Array): Uint8Array {
  const frame = encoder.compress(plain);
  const compress = frame.byteLength < plain.byteLength;
  const out = new Uint8Array(8 + (compress ? frame.byteLength : plain.byteLength));
  new DataView(out.buffer).setBigInt64(
    0,
    compress ? BigInt(plain.byteLength) : NOT_COMPRESSED,
    true,
  );
  out.set(compress ? frame : plain, 8);
  return out;
}

function invalid(offset: number, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset });
}

function unsupported(offset: number, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_UNSUPPORTED', reason, { offset });
}
