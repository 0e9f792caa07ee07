/**
 * A run of records as columns in one ArrayBuffer: what a source can hand
 * over instead of an object per record (columnar-batch.ts), and what raw
 * packs a batch into for its writer (sink-files packed-batch.ts). Arrow's
 * binary and int64 columns can be views into it, and handing it to another
 * thread is one transfer.
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
 * `buffer` can be longer than the layout (raw pools its buffers); `bytes` is
 * the length the layout uses. Offsets of a binary column start at 0 and are
 * relative to its byte region, as Arrow's are; a null key has an empty slot
 * and a cleared validity bit (the bitmap is meaningful only when
 * `nullKeys > 0`). Headers, with each record's tombstone mark, are in the
 * header codec's encoding (headers-codec.ts). Integers are in the platform's
 * byte order, which is the order Arrow's typed arrays use.
 */
export interface RecordColumns {
  readonly count: number;
  readonly nullKeys: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
  readonly headerBytes: number;
  /** Bytes of `buffer` the layout uses. */
  readonly bytes: number;
  readonly buffer: ArrayBuffer;
}

/** Byte positions of the regions of record columns, and the sizes they were laid out for. */
export interface ColumnsLayout {
  readonly count: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
  readonly headerBytes: number;
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

export function columnsLayout(
  count: number,
  keyBytes: number,
  valueBytes: number,
  headerBytes: number,
): ColumnsLayout {
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
    count,
    keyBytes,
    valueBytes,
    headerBytes,
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

/** The columns laid out by `at` in `buffer`, `nullKeys` of whose keys are null. */
export function columnsIn(at: ColumnsLayout, nullKeys: number, buffer: ArrayBuffer): RecordColumns {
  const { count, keyBytes, valueBytes, headerBytes } = at;
  return { count, nullKeys, keyBytes, valueBytes, headerBytes, bytes: at.total, buffer };
}

/** Which int32 of an int64 holds the low half, in the platform's byte order (Arrow's too). */
export const INT64_LO = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
export const INT64_HI = 1 - INT64_LO;
const TWO_32 = 0x1_0000_0000;

/** Writes a safe integer as an int64 at int32 index `2 * i` of `ints`: no BigInt per value. */
export function writeInt64(ints: Int32Array, i: number, value: number): void {
  // Exact for safe integers, negative ones included (two's complement halves).
  const low = value >>> 0;
  ints[2 * i + INT64_LO] = low;
  ints[2 * i + INT64_HI] = (value - low) / TWO_32;
}

/** The int64 at int32 index `2 * i` of `ints`, as a number (exact for safe integers). */
export function readInt64(ints: Int32Array, i: number): number {
  return (ints[2 * i + INT64_HI] ?? 0) * TWO_32 + ((ints[2 * i + INT64_LO] ?? 0) >>> 0);
}

/** Rounds up to a multiple of 8 (arithmetic, not bit operations: a batch can pass 2 GiB). */
function align8(n: number): number {
  return n + ((8 - (n % 8)) % 8);
}
