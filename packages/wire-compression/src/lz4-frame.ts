import { compressFrame, compressFrameSync, decompressFrame, decompressFrameSync } from 'lz4-napi';
import { WireCompressionError } from './errors.js';
import { lz4FrameSpans, type Lz4FrameSpan } from './lz4-frame-layout.js';
import { outputLimit, type DecompressOptions } from './output-limit.js';

/**
 * LZ4 in the FRAME format (magic 0x184D2204), the one the `lz4` command line
 * tool, Arrow's LZ4_FRAME body compression and Kafka's lz4 use. lz4-napi's
 * `compress`/`uncompress` are NOT this: they prepend a 4-byte size to a raw
 * block, which nothing else reads. Only the frame functions are used here.
 */
export interface Lz4FrameOptions {
  /**
   * xxHash32 of the whole content in the frame trailer, verified on
   * decompression: a flipped bit becomes an error instead of different data.
   * Default false, as Arrow's and Kafka's LZ4 writers have it (the frames
   * pyarrow writes carry none): on the wire the transport already checks
   * integrity. Turn it on for frames stored at rest.
   */
  readonly contentChecksum?: boolean;
  /** A checksum per block as well. Default false. */
  readonly blockChecksums?: boolean;
}

function frameOptions(options: Lz4FrameOptions | undefined) {
  return {
    contentChecksum: options?.contentChecksum ?? false,
    blockChecksums: options?.blockChecksums ?? false,
  };
}

/** Compresses into one LZ4 frame on the calling thread. */
export function compressLz4FrameSync(data: Uint8Array, options?: Lz4FrameOptions): Uint8Array {
  return compressFrameSync(asBuffer(data), frameOptions(options));
}

/** Compresses into one LZ4 frame on libuv's thread pool, off the event loop. */
export async function compressLz4Frame(
  data: Uint8Array,
  options?: Lz4FrameOptions,
): Promise<Uint8Array> {
  return compressFrame(data, frameOptions(options));
}

/**
 * Decompresses one or more concatenated LZ4 frames (skippable frames are
 * skipped). The frame layout is checked and the output bounded BEFORE
 * decompressing, so a malformed input names its byte offset and an input that
 * would expand beyond `maxOutputBytes` is refused without allocating for it.
 */
export function decompressLz4FrameSync(data: Uint8Array, options?: DecompressOptions): Uint8Array {
  const frames = planned(data, options);
  const parts = frames.map((f) =>
    checked(f, () => decompressFrameSync(asBuffer(data.subarray(f.start, f.end)))),
  );
  return join(parts);
}

/** As `decompressLz4FrameSync`, on libuv's thread pool. */
export async function decompressLz4Frame(
  data: Uint8Array,
  options?: DecompressOptions,
): Promise<Uint8Array> {
  const frames = planned(data, options);
  const parts: Uint8Array[] = [];
  for (const f of frames) {
    let out: Uint8Array;
    try {
      out = await decompressFrame(data.subarray(f.start, f.end));
    } catch (cause) {
      throw corrupt(f, cause);
    }
    parts.push(checked(f, () => out));
  }
  return join(parts);
}

function planned(data: Uint8Array, options: DecompressOptions | undefined): Lz4FrameSpan[] {
  const limit = outputLimit(options);
  const frames = lz4FrameSpans(data);
  let bound = 0;
  for (const f of frames) {
    const declared = f.contentSize ?? f.maxOutput;
    if (declared > f.maxOutput) {
      throw new WireCompressionError(
        'TWG_LZ4_FRAME_INVALID',
        `frame declares ${declared} content bytes but its blocks hold at most ${f.maxOutput}`,
        f.start,
      );
    }
    bound += declared;
  }
  if (bound > limit) {
    throw new WireCompressionError(
      'TWG_DECOMPRESS_LIMIT',
      `LZ4 input may expand to ${bound} bytes, above the limit of ${limit}`,
    );
  }
  return frames;
}

function checked(frame: Lz4FrameSpan, run: () => Uint8Array): Uint8Array {
  let out: Uint8Array;
  try {
    out = run();
  } catch (cause) {
    throw corrupt(frame, cause);
  }
  if (frame.contentSize !== undefined && out.byteLength !== frame.contentSize) {
    throw new WireCompressionError(
      'TWG_LZ4_FRAME_INVALID',
      `frame declares ${frame.contentSize} content bytes, decompressed to ${out.byteLength}`,
      frame.start,
    );
  }
  return out;
}

function corrupt(frame: Lz4FrameSpan, cause: unknown): WireCompressionError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new WireCompressionError(
    'TWG_LZ4_FRAME_INVALID',
    `frame of ${frame.end - frame.start} bytes does not decompress (${reason})`,
    frame.start,
    cause,
  );
}

function join(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1 && parts[0] !== undefined) return parts[0];
  return Buffer.concat(parts);
}

/** A Buffer view of the same memory: lz4-napi's sync functions take Buffers, not copies. */
function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
