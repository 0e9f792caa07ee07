import {
  ArrowBatchError,
  compressIpcBodies,
  decompressIpcBodies,
  scanIpcStream,
  type IpcBodyCodecs,
  type IpcBodyEncoder,
  type IpcCodecName,
} from '@thalweg/stream-arrow';
import { ThalwegError } from '@thalweg/connector-core';
import { WireCompressionError } from './errors.js';
import { compressLz4FrameSync, decompressLz4FrameSync } from './lz4-frame.js';
import { outputLimit, type DecompressOptions } from './output-limit.js';
import { decompressZstd } from './zstd.js';

export type { IpcCodecName } from '@thalweg/stream-arrow';

/**
 * The codecs of Arrow IPC body compression, LZ4_FRAME and ZSTD, for the one
 * IPC reader of @thalweg/stream-arrow: pass them as `codecs` to
 * `decodeIpcStream` or `readIpcFileSegment` (and the file source passes
 * them itself) to read compressed bodies. The IPC format (framing, length
 * prefixes, layout) is stream-arrow's; this package supplies the bytes-in,
 * bytes-out codecs, each bounded before it allocates.
 *
 * A frame's own bound (block count times block size) is coarse for small
 * buffers, so it is held to the message's limit; the reader checks the
 * exact declared length on the output.
 */
export const ipcBodyCodecs: IpcBodyCodecs = {
  decompress(codec, frame, _length, limit) {
    const options = { maxOutputBytes: limit };
    return codec === 'lz4-frame'
      ? decompressLz4FrameSync(frame, options)
      : decompressZstd(frame, options);
  },
};

/** LZ4_FRAME body compression (this package writes no zstd). */
export const lz4BodyEncoder: IpcBodyEncoder = {
  codec: 'lz4-frame',
  compress: (plain) => compressLz4FrameSync(plain),
};

/** The codecs the batches of an IPC stream are compressed with (empty when none is). */
export function ipcStreamCodecs(bytes: Uint8Array): IpcCodecName[] {
  return guarded(() => {
    const found = new Set<IpcCodecName>();
    for (const m of scanIpcStream(bytes)) {
      const c = m.compression;
      if (c === undefined) continue;
      if (c.codec === 0) found.add('lz4-frame');
      else if (c.codec === 1) found.add('zstd');
      else {
        throw new WireCompressionError(
          'TWG_IPC_CODEC_UNSUPPORTED',
          `body compression codec ${c.codec}`,
          m.offset,
        );
      }
    }
    return [...found];
  });
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
  return guarded(() => {
    if (bytes.byteLength === 0) {
      throw new WireCompressionError('TWG_IPC_STREAM_INVALID', 'no IPC message', 0);
    }
    return decompressIpcBodies(bytes, { codecs: ipcBodyCodecs, maxDecompressedBytes: limit });
  });
}

/**
 * Compresses every batch body of an uncompressed IPC stream with LZ4_FRAME,
 * buffer by buffer; a buffer whose frame would not be smaller is stored raw
 * behind a -1 length, as the format allows. Readers of compressed IPC
 * (pyarrow, Arrow C++, the Zerobus Arrow path) take the result.
 */
export function compressIpcStreamLz4(bytes: Uint8Array): Uint8Array {
  return guarded(() => compressIpcBodies(bytes, lz4BodyEncoder));
}

/**
 * The reader's refusals in this package's codes: a codec's own error (a bad
 * frame, a limit) as it was, an unsupported codec or method as
 * TWG_IPC_CODEC_UNSUPPORTED, a declared size above the limit as
 * TWG_DECOMPRESS_LIMIT, anything else about the stream as
 * TWG_IPC_STREAM_INVALID; each at the byte offset the reader names.
 */
function guarded<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (!(error instanceof ArrowBatchError)) throw error;
    const cause: unknown = error.cause;
    if (cause instanceof WireCompressionError) {
      throw new WireCompressionError(
        cause.code,
        `IPC body buffer: ${cause.message}`,
        error.offset,
        cause,
      );
    }
    const code =
      error.code === 'TWG_ARROW_IPC_UNSUPPORTED'
        ? 'TWG_IPC_CODEC_UNSUPPORTED'
        : error.code === 'TWG_ARROW_IPC_TOO_LARGE'
          ? 'TWG_DECOMPRESS_LIMIT'
          : 'TWG_IPC_STREAM_INVALID';
    throw new WireCompressionError(code, reasonOf(error), error.offset, error);
  }
}

/** The reader's reason without its location prefix (this package's message names the byte). */
function reasonOf(error: ThalwegError): string {
  return error.message.replace(/^(TWG_[A-Z_]+: )?(field "[^"]*", )?(byte \d+: )?/, '');
}
