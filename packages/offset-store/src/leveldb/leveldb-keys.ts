import type { CoverageKey, CursorKey } from '../coverage-store.js';

/**
 * Binary key layout of the local tier. One key per covered range, so that a
 * destination's coverage is one prefix scan in key order and a merge is a put
 * of the merged range plus deletes of the ranges it swallowed:
 *
 *   0x01 | u16 len | sink | u16 len | topic | u32 partition | u64 start  ->  u64 end
 *   0x02 | u64 seq                                           ->  JSON log entry not yet checkpointed
 *   0x03 | u16 len | source | u16 len | topic | u32 partition ->  JSON cursor
 *   0x00 | "meta"                                            ->  JSON { version, lastCheckpointAt }
 *
 * Integers are big-endian so byte order is numeric order.
 */
export const RANGE = 0x01;
export const LOG = 0x02;
export const CURSOR = 0x03;
export const META_KEY = Buffer.from([0x00, ...Buffer.from('meta')]);

function named(tag: number, a: string, b: string, partition: number, tail: number): Buffer {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  const key = Buffer.alloc(1 + 2 + x.length + 2 + y.length + 4 + tail);
  let at = key.writeUInt8(tag, 0);
  at = key.writeUInt16BE(x.length, at);
  at += x.copy(key, at);
  at = key.writeUInt16BE(y.length, at);
  at += y.copy(key, at);
  key.writeUInt32BE(partition, at);
  return key;
}

/** The prefix shared by every range key of one destination. */
export function destinationPrefix(key: CoverageKey): Buffer {
  return named(RANGE, key.sink, key.topic, key.partition, 0);
}

export function rangeKey(prefix: Buffer, start: number): Buffer {
  const key = Buffer.alloc(prefix.length + 8);
  prefix.copy(key, 0);
  writeU64(key, prefix.length, start);
  return key;
}

export function encodeEnd(end: number): Buffer {
  const b = Buffer.alloc(8);
  writeU64(b, 0, end);
  return b;
}

/** Decodes a range key back into its destination and start. */
export function decodeRangeKey(key: Uint8Array): { key: CoverageKey; start: number } {
  const b = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  let at = 1;
  const sinkLen = b.readUInt16BE(at);
  const sink = b.toString('utf8', at + 2, at + 2 + sinkLen);
  at += 2 + sinkLen;
  const topicLen = b.readUInt16BE(at);
  const topic = b.toString('utf8', at + 2, at + 2 + topicLen);
  at += 2 + topicLen;
  const partition = b.readUInt32BE(at);
  return {
    key: { sink: sink as CoverageKey['sink'], topic, partition },
    start: readU64(b, at + 4),
  };
}

export function logKey(seq: number): Buffer {
  const key = Buffer.alloc(9);
  key.writeUInt8(LOG, 0);
  writeU64(key, 1, seq);
  return key;
}

export function decodeLogKey(key: Uint8Array): number {
  return readU64(Buffer.from(key.buffer, key.byteOffset, key.byteLength), 1);
}

export function cursorKey(key: CursorKey): Buffer {
  return named(CURSOR, key.source, key.topic, key.partition, 0);
}

export function readU64(b: Buffer, at: number): number {
  return b.readUInt32BE(at) * 0x1_0000_0000 + b.readUInt32BE(at + 4);
}

/** Writes a safe integer as a big-endian u64; returns the position after it. */
export function writeU64(b: Buffer, at: number, value: number): number {
  b.writeUInt32BE(Math.floor(value / 0x1_0000_0000), at);
  return b.writeUInt32BE(value >>> 0, at + 4);
}

/** Bounds for a scan of every key with `prefix` followed by `width` more bytes. */
export function prefixBounds(prefix: Buffer): { gte: Buffer; lt: Buffer } {
  const lt = Buffer.from(prefix);
  // Increment the prefix as a big-endian number: the first key after all of it.
  for (let i = lt.length - 1; i >= 0; i--) {
    const byte = lt.readUInt8(i);
    if (byte < 0xff) {
      lt.writeUInt8(byte + 1, i);
      return { gte: prefix, lt: lt.subarray(0, i + 1) };
    }
  }
  return { gte: prefix, lt: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) };
}
