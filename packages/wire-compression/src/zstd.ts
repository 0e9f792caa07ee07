import { decompress } from 'fzstd';
import { WireCompressionError } from './errors.js';
import { outputLimit, type DecompressOptions } from './output-limit.js';
import { zstdFrameSummary } from './zstd-frame-layout.js';

/**
 * Zstandard decompression, decode only: thalweg reads zstd (Parquet pages
 * written with zstd, Arrow IPC bodies from other writers) but never needs to
 * write it, so a small pure-JavaScript decoder (fzstd) suffices and no native
 * encoder is taken on.
 *
 * fzstd does not verify a frame's optional content checksum and does not
 * support dictionaries (those frames are refused here). Before decoding, the
 * frame layout is walked so that a malformed input names its byte offset and
 * a bomb (output or window beyond `maxOutputBytes`) is refused before any
 * allocation.
 */
/**
 * Without a declared content size fzstd allocates the frame's window. zstd's
 * own levels use at most 8 MiB (windowLog 23), so a window up to that is
 * accepted even under a smaller limit; beyond it the limit decides.
 */
const WINDOW_ALLOWANCE = 8 * 1024 * 1024;

/**
 * Caution: fzstd trusts a frame's declared content size. If that field
 * disagrees with the blocks (corruption), the output is padded or cut to the
 * declared size without an error, and fzstd does not verify the optional
 * content checksum. Callers that know the expected length (Arrow IPC bodies,
 * Parquet pages) must compare it with the output; the IPC path does.
 */
export function decompressZstd(data: Uint8Array, options?: DecompressOptions): Uint8Array {
  const limit = outputLimit(options);
  const summary = zstdFrameSummary(data);
  if (summary.maxOutput > limit || summary.maxWindow > Math.max(limit, WINDOW_ALLOWANCE)) {
    throw new WireCompressionError(
      'TWG_DECOMPRESS_LIMIT',
      `zstd input may expand to ${summary.maxOutput} bytes (window ${summary.maxWindow}), ` +
        `above the limit of ${limit}`,
    );
  }
  try {
    return decompress(data);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new WireCompressionError(
      'TWG_ZSTD_FRAME_INVALID',
      `does not decompress (${reason})`,
      undefined,
      cause,
    );
  }
}
