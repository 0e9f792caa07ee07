import { WireCompressionError } from './errors.js';
import { readIpcMessages, writeIpcMessages, pad8, type IpcMessage } from './ipc-stream-framing.js';
import { compressLz4FrameSync, decompressLz4FrameSync } from './lz4-frame.js';
import { outputLimit, type DecompressOptions } from './output-limit.js';
import { recordBatchOf, rewriteRecordBatch, type BufferRegion } from './record-batch-table.js';
import { decompressZstd } from './zstd.js';

/**
 * Arrow IPC body compression (Message.fbs `BodyCompression`, method BUFFER):
 * each non-empty buffer of a record or dictionary batch body is an i64
 * little-endian uncompressed length followed by the codec's frame, or by the
 * raw bytes when that length is -1 (the writer found compression did not
 * pay). Empty buffers stay empty, without a prefix.
 *
 * Codecs: 0 = LZ4_FRAME, 1 = ZSTD.
 */
export const IPC_CODEC = { lz4Frame: 0, zstd: 1 } as const;
export type IpcCodecName = 'lz4-frame' | 'zstd';

const CODEC_NAME: Readonly<Record<number, IpcCodecName>> = { 0: 'lz4-frame', 1: 'zstd' };
const METHOD_BUFFER = 0;
const NOT_COMPRESSED = -1n;

/** The codecs the batches of an IPC stream are compressed with (empty when none is). */
export function ipcStreamCodecs(bytes: Uint8Array): IpcCodecName[] {
  const found = new Set<IpcCodecName>();
  for (const message of readIpcMessages(bytes)) {
    const c = recordBatchOf(message)?.compression;
    if (c !== undefined) found.add(codecName(message, c.codec));
  }
  return [...found];
}

/**
 * Rewrites an IPC stream so that no batch body is compressed: each buffer is
 * decompressed, laid out 8-byte aligned, and the BodyCompression removed. The
 * result is what any Arrow reader takes, including apache-arrow's without a
 * registered codec. A stream with no compressed batch is returned as is.
 *
 * `maxOutputBytes` bounds each message's decompressed body; the declared
 * lengths are checked against it before anything is decompressed.
 */
export function decompressIpcStream(bytes: Uint8Array, options?: DecompressOptions): Uint8Array {
  const limit = outputLimit(options);
  const messages = readIpcMessages(bytes);
  if (!messages.some((m) => recordBatchOf(m)?.compression !== undefined)) return bytes;
  return writeIpcMessages(messages.map((m) => decompressMessage(m, limit)));
}

function decompressMessage(message: IpcMessage, limit: number) {
  const batch = recordBatchOf(message);
  if (batch?.compression === undefined) return message;
  if (batch.compression.method !== METHOD_BUFFER) {
    throw new WireCompressionError(
      'TWG_IPC_CODEC_UNSUPPORTED',
      `body compression method ${batch.compression.method} (only BUFFER, 0, is defined)`,
      message.offset,
    );
  }
  const codec = codecName(message, batch.compression.codec);
  const declared = declaredLengths(message, batch.buffers);
  let total = 0;
  batch.buffers.forEach((region, i) => {
    const length = declared[i] ?? 0n;
    total += pad8(length === NOT_COMPRESSED ? region.length - 8 : Number(length));
  });
  if (total > limit) {
    throw new WireCompressionError(
      'TWG_DECOMPRESS_LIMIT',
      `batch body declares ${total} uncompressed bytes, above the limit of ${limit}`,
      message.offset,
    );
  }
  const body = new Uint8Array(total);
  const regions: BufferRegion[] = [];
  let at = 0;
  batch.buffers.forEach((region, i) => {
    const length = declared[i] ?? 0n;
    const payload = message.body.subarray(region.offset + 8, region.offset + region.length);
    let plain: Uint8Array;
    if (region.length === 0 || length === 0n) plain = payload.subarray(0, 0);
    else if (length === NOT_COMPRESSED) plain = payload;
    else plain = decode(codec, payload, Number(length), limit, message.bodyOffset + region.offset);
    body.set(plain, at);
    regions.push({ offset: at, length: plain.byteLength });
    at += pad8(plain.byteLength);
  });
  return { metadata: rewriteRecordBatch(message, batch, regions, undefined, total), body };
}

/** The i64 prefix of every non-empty buffer: its uncompressed length, or -1 (stored raw). */
function declaredLengths(message: IpcMessage, buffers: readonly BufferRegion[]): bigint[] {
  const body = message.body;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  return buffers.map((region, i) => {
    if (region.length === 0) return 0n;
    const at = message.bodyOffset + region.offset;
    if (region.offset < 0 || region.length < 8 || region.offset + region.length > body.byteLength) {
      throw new WireCompressionError(
        'TWG_IPC_STREAM_INVALID',
        `buffer ${i} (${region.offset}+${region.length}) is outside the body or has no length prefix`,
        at,
      );
    }
    const length = view.getBigInt64(region.offset, true);
    if (length < NOT_COMPRESSED) {
      throw new WireCompressionError(
        'TWG_IPC_STREAM_INVALID',
        `buffer ${i} declares length ${length}`,
        at,
      );
    }
    return length;
  });
}

/**
 * A frame's own bound (block count times block size) is coarse for small
 * buffers, so it is held to the message's limit; the exact declared length
 * is then checked on the output.
 */
function decode(
  codec: IpcCodecName,
  frame: Uint8Array,
  length: number,
  limit: number,
  offset: number,
): Uint8Array {
  let out: Uint8Array;
  const options = { maxOutputBytes: limit };
  try {
    out =
      codec === 'lz4-frame'
        ? decompressLz4FrameSync(frame, options)
        : decompressZstd(frame, options);
  } catch (cause) {
    if (!(cause instanceof WireCompressionError)) throw cause;
    throw new WireCompressionError(cause.code, `IPC body buffer: ${cause.message}`, offset, cause);
  }
  if (out.byteLength !== length) {
    throw new WireCompressionError(
      'TWG_IPC_STREAM_INVALID',
      `buffer declares ${length} uncompressed bytes, its ${codec} frame holds ${out.byteLength}`,
      offset,
    );
  }
  return out;
}

/**
 * Compresses every batch body of an uncompressed IPC stream with LZ4_FRAME,
 * buffer by buffer; a buffer whose frame would not be smaller is stored raw
 * behind a -1 length, as the format allows. Readers of compressed IPC
 * (pyarrow, Arrow C++, the Zerobus Arrow path) take the result.
 */
export function compressIpcStreamLz4(bytes: Uint8Array): Uint8Array {
  const messages = readIpcMessages(bytes).map((message) => {
    const batch = recordBatchOf(message);
    if (batch === undefined) return message;
    if (batch.compression !== undefined) {
      throw new WireCompressionError(
        'TWG_IPC_STREAM_INVALID',
        'batch body is already compressed',
        message.offset,
      );
    }
    const parts: Uint8Array[] = [];
    const regions: BufferRegion[] = [];
    let at = 0;
    for (const region of batch.buffers) {
      if (region.offset < 0 || region.offset + region.length > message.body.byteLength) {
        throw new WireCompressionError(
          'TWG_IPC_STREAM_INVALID',
          `buffer ${region.offset}+${region.length} is outside the body`,
          message.bodyOffset,
        );
      }
      const plain = message.body.subarray(region.offset, region.offset + region.length);
      const stored = plain.byteLength === 0 ? plain : prefixed(plain);
      parts.push(stored);
      regions.push({ offset: at, length: stored.byteLength });
      at += pad8(stored.byteLength);
    }
    const body = new Uint8Array(at);
    regions.forEach((r, i) => body.set(parts[i] ?? new Uint8Array(0), r.offset));
    const compression = { codec: IPC_CODEC.lz4Frame, method: METHOD_BUFFER };
    return { metadata: rewriteRecordBatch(message, batch, regions, compression, at), body };
  });
  return writeIpcMessages(messages);
}

function prefixed(plain: Uint8Array): Uint8Array {
  const frame = compressLz4FrameSync(plain);
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

function codecName(message: IpcMessage, codec: number): IpcCodecName {
  const name = CODEC_NAME[codec];
  if (name === undefined) {
    throw new WireCompressionError(
      'TWG_IPC_CODEC_UNSUPPORTED',
      `body compression codec ${codec}`,
      message.offset,
    );
  }
  return name;
}
