import { BINARY_KEY_BYTES } from '../memory/key-table.js';

/**
 * One etcd value of a binary set (ADR 0037): the keys one `claimMany` added,
 * with their places and when they expire (the writer's clock). Little-endian,
 * a 32-byte header and then one of two layouts:
 *
 *   0  'TWBS'  magic
 *   4  u8      version (1)
 *   5  u8      layout: 0 columns, 1 one partition
 *   8  u32     count n
 *   12 u32     the partition (layout 1)
 *   16 f64     expiresAt (ms since the epoch)
 *   24 f64     the least offset (layout 1)
 *   32 layout 0: f64 x n offsets, 16 x n keys, u32 x n partitions
 *      layout 1: 16 x n keys, u32 x n offsets less the least
 *
 * Layout 1 (20 bytes a key, against 28) serves a piece of one partition
 * whose offsets span less than 2^32, as content dedup's pieces are: etcd
 * writes fewer bytes. Every column is aligned for a typed-array view. A
 * value that is not exactly this (another version, a foreign writer,
 * garbage) decodes to null and is ignored.
 */
export interface BinaryPiece {
  readonly count: number;
  readonly expiresAt: number;
  /** The keys, packed, BINARY_KEY_BYTES each. */
  readonly keys: Uint8Array;
  readonly partitions: Uint32Array;
  readonly offsets: Float64Array;
}

const MAGIC = [0x54, 0x57, 0x42, 0x53]; // 'TWBS'
const VERSION = 1;
const HEADER_BYTES = 32;
const COLUMNS_BYTES_PER_KEY = 8 + BINARY_KEY_BYTES + 4;
const ONE_PARTITION_BYTES_PER_KEY = BINARY_KEY_BYTES + 4;

/** Largest value one etcd put carries: below etcd's default 1.5 MiB request bound. */
export const MAX_PIECE_BYTES = 512 * 1024;

/** Most keys one piece holds (in the larger layout); a call adding more is written as several pieces. */
export const MAX_PIECE_KEYS = Math.floor((MAX_PIECE_BYTES - HEADER_BYTES) / COLUMNS_BYTES_PER_KEY);

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Keys [from, from + n) of a call (`keys` packed, `partitions`, `offsets` per key) as one value. */
export function encodePiece(
  keys: Uint8Array,
  partitions: Uint32Array,
  offsets: Float64Array,
  from: number,
  n: number,
  expiresAt: number,
): Uint8Array {
  const partition = partitions[from] ?? 0;
  let least = Infinity;
  let most = -Infinity;
  let one = true;
  for (let i = from; i < from + n; i++) {
    const o = offsets[i] ?? 0;
    if (o < least) least = o;
    if (o > most) most = o;
    if (partitions[i] !== partition) one = false;
  }
  one &&= n > 0 && most - least < 0x1_0000_0000;
  const out = new Uint8Array(
    HEADER_BYTES + n * (one ? ONE_PARTITION_BYTES_PER_KEY : COLUMNS_BYTES_PER_KEY),
  );
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  view.setUint8(4, VERSION);
  view.setUint8(5, one ? 1 : 0);
  view.setUint32(8, n, true);
  view.setFloat64(16, expiresAt, true);
  const packed = keys.subarray(from * BINARY_KEY_BYTES, (from + n) * BINARY_KEY_BYTES);
  if (one) {
    view.setUint32(12, partition, true);
    view.setFloat64(24, least, true);
    out.set(packed, HEADER_BYTES);
    const deltasAt = HEADER_BYTES + BINARY_KEY_BYTES * n;
    for (let i = 0; i < n; i++) {
      view.setUint32(deltasAt + 4 * i, (offsets[from + i] ?? 0) - least, true);
    }
    return out;
  }
  const keysAt = HEADER_BYTES + 8 * n;
  const partitionsAt = keysAt + BINARY_KEY_BYTES * n;
  out.set(packed, keysAt);
  if (LITTLE_ENDIAN) {
    new Float64Array(out.buffer, HEADER_BYTES, n).set(offsets.subarray(from, from + n));
    new Uint32Array(out.buffer, partitionsAt, n).set(partitions.subarray(from, from + n));
  } else {
    for (let i = 0; i < n; i++) {
      view.setFloat64(HEADER_BYTES + 8 * i, offsets[from + i] ?? 0, true);
      view.setUint32(partitionsAt + 4 * i, partitions[from + i] ?? 0, true);
    }
  }
  return out;
}

/** The piece `value` holds, or null when it is not a piece of this version (it is then ignored). */
export function decodePiece(value: Uint8Array): BinaryPiece | null {
  if (value.byteLength < HEADER_BYTES) return null;
  for (let i = 0; i < MAGIC.length; i++) if (value[i] !== MAGIC[i]) return null;
  // The columns are views of one 8-byte aligned value (copied when it is not).
  const bytes = value.byteOffset % 8 === 0 ? value : new Uint8Array(value);
  const at = bytes.byteOffset;
  const view = new DataView(bytes.buffer, at, bytes.byteLength);
  const layout = view.getUint8(5);
  if (view.getUint8(4) !== VERSION || (layout !== 0 && layout !== 1)) return null;
  const count = view.getUint32(8, true);
  const expiresAt = view.getFloat64(16, true);
  const perKey = layout === 1 ? ONE_PARTITION_BYTES_PER_KEY : COLUMNS_BYTES_PER_KEY;
  if (bytes.byteLength !== HEADER_BYTES + count * perKey) return null;
  if (!Number.isFinite(expiresAt) || expiresAt <= 0) return null;
  let keys: Uint8Array;
  let offsets: Float64Array;
  let partitions: Uint32Array;
  if (layout === 1) {
    keys = bytes.subarray(HEADER_BYTES, HEADER_BYTES + BINARY_KEY_BYTES * count);
    partitions = new Uint32Array(count).fill(view.getUint32(12, true));
    offsets = new Float64Array(count);
    const least = view.getFloat64(24, true);
    const deltasAt = HEADER_BYTES + BINARY_KEY_BYTES * count;
    for (let i = 0; i < count; i++) offsets[i] = least + view.getUint32(deltasAt + 4 * i, true);
  } else {
    const keysAt = HEADER_BYTES + 8 * count;
    const partitionsAt = keysAt + BINARY_KEY_BYTES * count;
    keys = bytes.subarray(keysAt, partitionsAt);
    if (LITTLE_ENDIAN) {
      offsets = new Float64Array(bytes.buffer, at + HEADER_BYTES, count);
      partitions = new Uint32Array(bytes.buffer, at + partitionsAt, count);
    } else {
      offsets = new Float64Array(count);
      partitions = new Uint32Array(count);
      for (let i = 0; i < count; i++) {
        offsets[i] = view.getFloat64(HEADER_BYTES + 8 * i, true);
        partitions[i] = view.getUint32(partitionsAt + 4 * i, true);
      }
    }
  }
  for (let i = 0; i < count; i++) {
    const o = offsets[i] ?? -1;
    if (!Number.isSafeInteger(o) || o < 0) return null;
  }
  return { count, expiresAt, keys, partitions, offsets };
}
