import { isUtf8 } from 'node:buffer';
import { DataType, type Data, type RecordBatch } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';

/**
 * apache-arrow trusts the buffer regions an IPC message declares: a region
 * shorter than the column needs becomes a typed array that silently reads
 * `undefined`, and utf8 offsets are never checked. A decoded batch from the
 * outside is therefore checked before it is handed on: every column has its
 * rows, a non-nullable column no nulls, every buffer is long enough, value
 * offsets rise within their data, and utf8 data is valid UTF-8.
 */
export function checkDecodedBatch(batch: RecordBatch): void {
  batch.schema.fields.forEach((field, i) => {
    const data = batch.getChildAt(i)?.data;
    if (data === undefined || data.length !== 1) {
      broken(field.name, 'column is missing or split into chunks');
    }
    const column = data[0] as Data | undefined;
    if (column === undefined || column.length !== batch.numRows) {
      broken(field.name, `holds ${column?.length ?? 0} values for ${batch.numRows} rows`);
    }
    // The schema is the table's contract: nulls where it allows none are
    // refused, as the builder refuses them.
    if (!field.nullable && column.nullCount > 0) {
      broken(field.name, `holds ${column.nullCount} nulls in a non-nullable column`);
    }
    checkColumn(field.name, column);
  });
}

function checkColumn(name: string, column: Data): void {
  const n = column.length;
  const bitmap = column.nullBitmap as Uint8Array | undefined;
  if (column.nullCount > 0 && (bitmap === undefined || bitmap.byteLength < (n + 7) >> 3)) {
    broken(name, 'validity bitmap is shorter than the column');
  }
  // A null count that disagrees with the bitmap turns nulls into values (a
  // count of 0 makes readers drop the bitmap) or values into nulls.
  if (
    bitmap !== undefined &&
    bitmap.byteLength >= (n + 7) >> 3 &&
    column.nullCount !== zeroBits(bitmap, column.offset, n)
  ) {
    broken(
      name,
      `declares ${column.nullCount} nulls but its validity bitmap holds ${zeroBits(bitmap, column.offset, n)}`,
    );
  }
  const type = column.type;
  if (DataType.isUtf8(type) || DataType.isBinary(type)) {
    const offsets = column.valueOffsets as Int32Array | undefined;
    const values = column.values as Uint8Array | undefined;
    if (offsets === undefined || offsets.length < n + 1 || values === undefined) {
      broken(name, 'value offsets are shorter than the column');
    }
    let previous = offsets[0] ?? -1;
    if (previous < 0) broken(name, 'first value offset is negative');
    for (let i = 1; i <= n; i++) {
      const next = offsets[i] ?? -1;
      if (next < previous) broken(name, `value offset ${i} goes backwards`);
      previous = next;
    }
    if (previous > values.byteLength) broken(name, 'value offsets run past the data buffer');
    if (DataType.isUtf8(type)) {
      if (!isUtf8(values.subarray(offsets[0], previous)))
        broken(name, 'utf8 data is not valid UTF-8');
      // Valid as a whole is not enough: each value is decoded alone, so no
      // offset may fall inside a character (on a continuation byte).
      for (let i = 1; i < n; i++) {
        const at = offsets[i] ?? 0;
        if (at < previous && ((values[at] ?? 0) & 0xc0) === 0x80) {
          broken(name, `value ${i} starts inside a UTF-8 character`);
        }
      }
    }
    return;
  }
  const values = column.values as ArrayLike<unknown> | undefined;
  const needed = DataType.isBool(type) ? (n + 7) >> 3 : n;
  if (values !== undefined && values.length < needed) {
    broken(name, `data buffer holds ${values.length} of ${needed} values`);
  }
}

function broken(field: string, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { field });
}

/** Set bits per byte value. */
const POPCOUNT = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let x = b; x !== 0; x >>= 1) n += x & 1;
  return n;
});

/** Cleared bits among `n` bits starting at bit `offset`: the nulls a bitmap holds. */
function zeroBits(bitmap: Uint8Array, offset: number, n: number): number {
  const end = offset + n;
  let ones = 0;
  let i = offset;
  const isSet = (bit: number) => ((bitmap[bit >> 3] ?? 0) >> (bit & 7)) & 1;
  for (; i < end && (i & 7) !== 0; i++) ones += isSet(i);
  for (; i + 8 <= end; i += 8) ones += POPCOUNT[bitmap[i >> 3] ?? 0] ?? 0;
  for (; i < end; i++) ones += isSet(i);
  return n - ones;
}
