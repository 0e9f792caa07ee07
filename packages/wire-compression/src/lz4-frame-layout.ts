import { WireCompressionError } from './errors.js';

/**
 * The LZ4 frame format (lz4's `lz4_Frame_format.md`), read without
 * decompressing: magic, FLG, BD, optional content size and dictionary id, a
 * header checksum, then blocks each prefixed by a u32 size (high bit set =
 * stored uncompressed; 0 = end mark), then an optional content checksum.
 * Several frames may be concatenated, and skippable frames (magic
 * 0x184D2A50..5F, u32 size, payload) may sit between them.
 *
 * Walking the block headers gives an upper bound of the output size, so a
 * decompression bomb is refused before any memory is allocated for it.
 */

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

/** Block maximum sizes by the BD byte's bits 6..4. */
const BLOCK_MAX: Readonly<Record<number, number>> = {
  4: 64 * 1024,
  5: 256 * 1024,
  6: 1024 * 1024,
  7: 4 * 1024 * 1024,
};

export interface Lz4FrameSpan {
  /** Byte range of one LZ4 frame (not a skippable one) in the input. */
  readonly start: number;
  readonly end: number;
  /** Content size the frame declares in its header, if it does. */
  readonly contentSize: number | undefined;
  /** Upper bound of the frame's decompressed size, from its block headers. */
  readonly maxOutput: number;
}

export function lz4FrameSpans(data: Uint8Array): Lz4FrameSpan[] {
  const frames: Lz4FrameSpan[] = [];
  let at = 0;
  if (data.byteLength === 0) fail(0, 'empty input: not an LZ4 frame');
  while (at < data.byteLength) {
    const magic = u32(data, at);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      at = skip(data, at + 8, u32(data, at + 4), at);
      continue;
    }
    if (magic !== FRAME_MAGIC) {
      fail(at, `magic 0x${magic.toString(16)} is not an LZ4 frame (0x184d2204)`);
    }
    frames.push(frame(data, at));
    at = frames[frames.length - 1]?.end ?? data.byteLength;
  }
  return frames;
}

function frame(data: Uint8Array, start: number): Lz4FrameSpan {
  const flg = byte(data, start + 4);
  const bd = byte(data, start + 5);
  if (flg >> 6 !== 1) fail(start + 4, `frame version ${flg >> 6} is not 1`);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) fail(start + 4, 'reserved header bits are set');
  const blockMax = BLOCK_MAX[(bd >> 4) & 0x7];
  if (blockMax === undefined)
    fail(start + 5, `block maximum size code ${(bd >> 4) & 7} is invalid`);
  const blockChecksum = (flg & 0x10) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  let at = start + 6;
  let contentSize: number | undefined;
  if ((flg & 0x08) !== 0) {
    const low = u32(data, at);
    const high = u32(data, at + 4);
    // Above 2^53 it is refused by any limit anyway; keep it exact below.
    contentSize = high * 0x1_0000_0000 + low;
    at += 8;
  }
  if ((flg & 0x01) !== 0) at += 4;
  at += 1; // header checksum: lz4 itself verifies it
  let maxOutput = 0;
  for (;;) {
    const word = u32(data, at);
    at += 4;
    if (word === 0) break;
    const size = word & 0x7fffffff;
    const stored = word >>> 31 === 1;
    if (size > blockMax) fail(at - 4, `block of ${size} bytes exceeds the frame's ${blockMax}`);
    at = skip(data, at, size + (blockChecksum ? 4 : 0), at - 4);
    maxOutput += stored ? size : blockMax;
  }
  if (contentChecksum) at = skip(data, at, 4, at);
  return { start, end: at, contentSize, maxOutput };
}

function skip(data: Uint8Array, from: number, length: number, blockAt: number): number {
  const end = from + length;
  if (end > data.byteLength) {
    fail(blockAt, `truncated: ${length} bytes announced, ${data.byteLength - from} left`);
  }
  return end;
}

function u32(data: Uint8Array, at: number): number {
  if (at + 4 > data.byteLength) fail(at, 'truncated frame: 4 more bytes expected');
  // Little-endian; the checked bound makes every index below valid.
  return (
    ((data[at] ?? 0) | ((data[at + 1] ?? 0) << 8) | ((data[at + 2] ?? 0) << 16)) +
    (data[at + 3] ?? 0) * 0x1000000
  );
}

function byte(data: Uint8Array, at: number): number {
  const value = data[at];
  if (value === undefined) fail(at, 'truncated frame header');
  return value;
}

function fail(offset: number, message: string): never {
  throw new WireCompressionError('TWG_LZ4_FRAME_INVALID', message, offset);
}
