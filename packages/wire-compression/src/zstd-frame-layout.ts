import { WireCompressionError } from './errors.js';

/**
 * The Zstandard frame format (RFC 8878 section 3.1), read without
 * decompressing: magic, frame header descriptor, optional window descriptor,
 * dictionary id and content size, then blocks with 3-byte headers (last flag,
 * type, size), then an optional 4-byte checksum. Skippable frames (magic
 * 0x184D2A50..5F) may sit between frames.
 *
 * The block headers bound the output (a raw or RLE block regenerates exactly
 * its size, a compressed one at most min(window, 128 KiB)), and the window
 * bounds the decoder's own allocation, so both are checked against the
 * caller's limit before fzstd allocates anything.
 */

const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC = 0x184d2a50;
const MAX_BLOCK = 128 * 1024;

export interface ZstdFrameSummary {
  /** Upper bound of the decompressed size of all frames. */
  readonly maxOutput: number;
  /** The largest window any frame asks the decoder to allocate. */
  readonly maxWindow: number;
}

export function zstdFrameSummary(data: Uint8Array): ZstdFrameSummary {
  if (data.byteLength === 0) fail(0, 'empty input: not a zstd frame');
  let at = 0;
  let maxOutput = 0;
  let maxWindow = 0;
  while (at < data.byteLength) {
    const magic = u32(data, at);
    if ((magic & 0xfffffff0) >>> 0 === SKIPPABLE_MAGIC) {
      at = within(data, at + 8 + u32(data, at + 4), at);
      continue;
    }
    if (magic !== FRAME_MAGIC) {
      fail(at, `magic 0x${magic.toString(16)} is not a zstd frame (0xfd2fb528)`);
    }
    const frame = readFrame(data, at);
    maxOutput += frame.output;
    maxWindow = Math.max(maxWindow, frame.window);
    at = frame.end;
  }
  return { maxOutput, maxWindow };
}

function readFrame(data: Uint8Array, start: number) {
  const fhd = byte(data, start + 4);
  if ((fhd & 0x08) !== 0) fail(start + 4, 'reserved frame header bit is set');
  const singleSegment = (fhd & 0x20) !== 0;
  const dictIdBytes = [0, 1, 2, 4][fhd & 3] ?? 0;
  const fcsCode = fhd >> 6;
  const fcsBytes = fcsCode === 0 ? (singleSegment ? 1 : 0) : 1 << fcsCode;
  let at = start + 5;
  let window = 0;
  if (!singleSegment) {
    const wd = byte(data, at);
    const base = 2 ** (10 + (wd >> 3));
    window = base + (base / 8) * (wd & 7);
    at += 1;
  }
  if (dictIdBytes > 0 && readLE(data, at, dictIdBytes) !== 0) {
    fail(at, 'frames that need a dictionary are not supported');
  }
  at += dictIdBytes;
  let contentSize: number | undefined;
  if (fcsBytes > 0) contentSize = readLE(data, at, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
  at += fcsBytes;
  if (singleSegment) window = contentSize ?? 0;
  const blockMax = Math.min(window, MAX_BLOCK);
  let output = 0;
  for (;;) {
    const header = readLE(data, at, 3);
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === 3) fail(at, 'reserved block type');
    if (type !== 2 && size > blockMax) fail(at, `block of ${size} bytes exceeds ${blockMax}`);
    output += type === 2 ? blockMax : size;
    at = within(data, at + 3 + (type === 1 ? 1 : size), at);
    if ((header & 1) === 1) break;
  }
  if ((fhd & 0x04) !== 0) at = within(data, at + 4, at);
  if (contentSize !== undefined) {
    if (contentSize > output) {
      fail(start, `frame declares ${contentSize} bytes but its blocks hold at most ${output}`);
    }
    output = contentSize;
  }
  return { end: at, output, window };
}

function within(data: Uint8Array, end: number, from: number): number {
  if (end > data.byteLength) fail(from, `truncated: needs ${end - data.byteLength} more bytes`);
  return end;
}

function readLE(data: Uint8Array, at: number, bytes: number): number {
  within(data, at + bytes, at);
  let value = 0;
  for (let i = bytes - 1; i >= 0; i--) value = value * 256 + (data[at + i] ?? 0);
  return value;
}

function u32(data: Uint8Array, at: number): number {
  return readLE(data, at, 4);
}

function byte(data: Uint8Array, at: number): number {
  return readLE(data, at, 1);
}

function fail(offset: number, message: string): never {
  throw new WireCompressionError('TWG_ZSTD_FRAME_INVALID', message, offset);
}
