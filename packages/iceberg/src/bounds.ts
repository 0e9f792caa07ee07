import { IcebergError } from './errors.js';

/**
 * Decodes a column bound in Iceberg's single-value binary serialization
 * (spec Appendix D) for the integer types the scan prunes on: `int` is 4
 * bytes little-endian, `long` 8 bytes little-endian, both two's complement.
 * Other types are refused by the caller before a bound is ever decoded.
 */
export function decodeIntegerBound(bytes: Uint8Array, type: 'int' | 'long', what: string): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type === 'int' && bytes.byteLength === 4) return BigInt(view.getInt32(0, true));
  // a long column's bound may be written as 4 bytes by a writer that promoted int to long
  if (type === 'long' && bytes.byteLength === 8) return view.getBigInt64(0, true);
  if (type === 'long' && bytes.byteLength === 4) return BigInt(view.getInt32(0, true));
  throw new IcebergError(
    'TWG_ICEBERG_AVRO_CORRUPT',
    what,
    `${type === 'int' ? 'an' : 'a'} ${type} bound of ${bytes.byteLength} bytes`,
  );
}

/** True when a file with these bounds on a column may hold a value in [lo, hi) . Missing bounds: it may. */
export function mayOverlap(
  lower: bigint | undefined,
  upper: bigint | undefined,
  lo: bigint,
  hi: bigint,
): boolean {
  if (lower !== undefined && lower >= hi) return false;
  if (upper !== undefined && upper < lo) return false;
  return true;
}
