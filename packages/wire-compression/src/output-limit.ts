import { WireCompressionError } from './errors.js';

/**
 * The default ceiling on one decompressed output (a frame, a buffer, an IPC
 * body): well above any batch a sink accepts, well below what would take the
 * process down. Compressed input is untrusted; a few kilobytes of LZ4 can
 * claim gigabytes, so every decoder checks its bound BEFORE allocating.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 1 << 30;

export interface DecompressOptions {
  /** Refuse output larger than this many bytes. Default 1 GiB. */
  readonly maxOutputBytes?: number;
}

export function outputLimit(options: DecompressOptions | undefined): number {
  const value = options?.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new WireCompressionError(
      'TWG_DECOMPRESS_LIMIT',
      `maxOutputBytes ${String(value)} is not a non-negative safe integer`,
    );
  }
  return value;
}
