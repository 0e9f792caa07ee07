import type { OffsetSpan } from '@thalweg/connector-core';

/**
 * A source batch packed for the writer: every buffer of its raw envelope in
 * one ArrayBuffer, so handing it to the writer thread is one transfer (no
 * structured clone of per-record objects), and the envelope's Arrow columns
 * are views into it (no copy on the writer's side either).
 *
 * Layout of `buffer` (n = count; every region starts 8-byte aligned):
 *
 * | region          | type            | length                 |
 * |-----------------|-----------------|------------------------|
 * | offsets         | int64           | n                      |
 * | timestamps      | int64 (ms)      | n                      |
 * | key offsets     | int32           | n + 1                  |
 * | value offsets   | int32           | n + 1                  |
 * | header offsets  | int32           | n + 1                  |
 * | key validity    | bitmap          | ceil(n / 8) bytes      |
 * | keys            | bytes           | keyBytes               |
 * | values          | bytes           | valueBytes             |
 * | headers         | bytes           | headerBytes            |
 *
 * `buffer` can be longer than the layout (it is pooled: buffer-pool.ts);
 * `bytes` is the length the layout uses. Offsets of a binary column start
 * at 0 and are relative to its byte
 * region, as Arrow's are; a null key has an empty slot and a cleared
 * validity bit (the bitmap is meaningful only when `nullKeys > 0`). Headers
 * are in the header codec's encoding (headers-codec.ts). Integers are in the
 * platform's byte order, which is the order Arrow's typed arrays use.
 */
export interface PackedBatch {
  readonly span: OffsetSpan;
  readonly count: number;
  readonly nullKeys: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
  readonly headerBytes: number;
  /** Bytes of `buffer` the layout uses: what queues and segment bounds count. */
  readonly bytes: number;
  readonly buffer: ArrayBuffer;
}

/** Byte positions of the regions of a packed batch. */
export interface PackLayout {
  readonly offsets: number;
  readonly timestamps: number;
  readonly keyOffsets: number;
  readonly valueOffsets: number;
  readonly headerOffsets: number;
  readonly validity: number;
  readonly validityBytes: number;
  readonly keys: number;
  readonly values: number;
  readonly headers: number;
  readonly total: number;
}

export function packLayout(
  count: number,
  keyBytes: number,
  valueBytes: number,
  headerBytes: number,
): PackLayout {
  const offsetsBytes = align8(4 * (count + 1));
  const timestamps = 8 * count;
  const keyOffsets = 16 * count;
  const valueOffsets = keyOffsets + offsetsBytes;
  const headerOffsets = valueOffsets + offsetsBytes;
  const validity = headerOffsets + offsetsBytes;
  const validityBytes = (count + 7) >> 3;
  const keys = align8(validity + validityBytes);
  const values = align8(keys + keyBytes);
  const headers = align8(values + valueBytes);
  return {
    offsets: 0,
    timestamps,
    keyOffsets,
    valueOffsets,
    headerOffsets,
    validity,
    validityBytes,
    keys,
    values,
    headers,
    total: headers + headerBytes,
  };
}

/** Rounds up to a multiple of 8 (arithmetic, not bit operations: a batch can pass 2 GiB). */
function align8(n: number): number {
  return n + ((8 - (n % 8)) % 8);
}
