import { isUtf8 } from 'node:buffer';
import { DataType, type Data, type RecordBatch, type Union } from 'apache-arrow';
import { ArrowBatchError } from './errors.js';

/**
 * apache-arrow trusts the buffer regions an IPC message declares: a region
 * shorter than the column needs becomes a typed array that silently reads
 * `undefined`, and offsets, type ids and dictionary indices are never
 * checked. A decoded batch from the outside is therefore checked before it
 * is handed on, every column and every child of a nested one: it has its
 * rows, a non-nullable column no nulls, every buffer is long enough, value
 * offsets rise within their data, utf8 data is valid UTF-8, union type ids
 * name a child and dense offsets lie in it, dictionary indices lie in the
 * dictionary. `null` columns and unions have no validity bitmap (by the
 * format), so none is asked of them. The types this checks are the ones
 * message-bounds.ts lets through; any other is refused there as unsupported.
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
    // A union has no validity of its own (its nullCount is its children's):
    // its nulls are the rows whose chosen child value is null.
    const nulls = DataType.isUnion(column.type)
      ? checkUnion(field.name, column, column.type)
      : (checkData(field.name, column), column.nullCount);
    if (!field.nullable && !DataType.isNull(column.type) && nulls > 0) {
      broken(field.name, `holds ${nulls} nulls in a non-nullable column`);
    }
  });
}

function checkData(name: string, column: Data): void {
  const type = column.type;
  if (DataType.isNull(type)) return;
  if (DataType.isUnion(type)) {
    checkUnion(name, column, type);
    return;
  }
  checkValidity(name, column);
  const n = column.length;
  if (DataType.isDictionary(type)) {
    checkDictionary(name, column);
  } else if (
    DataType.isUtf8(type) ||
    DataType.isBinary(type) ||
    DataType.isLargeUtf8(type) ||
    DataType.isLargeBinary(type)
  ) {
    const values = column.values as Uint8Array | undefined;
    if (values === undefined) broken(name, 'no data buffer');
    const [first, last] = checkOffsets(name, column, values.byteLength);
    if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) checkUtf8(name, column, first, last);
  } else if (DataType.isList(type) || DataType.isMap(type)) {
    const child = only(name, column);
    // A map's entries are a struct of a key and a value (Schema.fbs).
    if (DataType.isMap(type) && !(DataType.isStruct(child.type) && child.children.length === 2)) {
      broken(name, 'map entries are not a struct of a key and a value');
    }
    checkOffsets(name, column, child.length);
    checkData(`${name}[]`, child);
  } else if (DataType.isFixedSizeList(type)) {
    const child = only(name, column);
    if (child.length < n * type.listSize) {
      broken(name, `list values hold ${child.length} of ${n * type.listSize} values`);
    }
    checkData(`${name}[]`, child);
  } else if (DataType.isStruct(type)) {
    type.children.forEach((field, i) => {
      const child = column.children[i];
      if (child === undefined || child.length < n) {
        broken(`${name}.${field.name}`, `holds ${child?.length ?? 0} values for ${n} rows`);
      }
      checkData(`${name}.${field.name}`, child);
    });
  } else {
    const values = column.values as ArrayLike<unknown> | undefined;
    const needed = DataType.isBool(type) ? (n + 7) >> 3 : n * column.stride;
    if (values === undefined || values.length < needed) {
      broken(name, `data buffer holds ${values?.length ?? 0} of ${needed} values`);
    }
  }
}

function checkValidity(name: string, column: Data): void {
  const n = column.length;
  const bitmap = column.nullBitmap as Uint8Array | undefined;
  if (column.nullCount > 0 && (bitmap === undefined || bitmap.byteLength < (n + 7) >> 3)) {
    broken(name, 'validity bitmap is shorter than the column');
  }
  // A null count that disagrees with the bitmap turns nulls into values (a
  // count of 0 makes readers drop the bitmap) or values into nulls.
  if (bitmap !== undefined && bitmap.byteLength >= (n + 7) >> 3) {
    const zeros = zeroBits(bitmap, column.offset, n);
    if (column.nullCount !== zeros) {
      broken(name, `declares ${column.nullCount} nulls but its validity bitmap holds ${zeros}`);
    }
  }
}

/** n + 1 offsets, none negative, none going back, the last within `limit`: the first and last. */
function checkOffsets(name: string, column: Data, limit: number): [number, number] {
  const n = column.length;
  const offsets = column.valueOffsets as ArrayLike<number | bigint> | undefined;
  if (offsets === undefined || offsets.length < n + 1) {
    broken(name, 'value offsets are shorter than the column');
  }
  const first = Number(offsets[0]);
  if (!(first >= 0)) broken(name, 'first value offset is negative');
  let previous = first;
  for (let i = 1; i <= n; i++) {
    const next = Number(offsets[i]);
    if (!(next >= previous)) broken(name, `value offset ${i} goes backwards`);
    previous = next;
  }
  if (previous > limit) broken(name, 'value offsets run past the data buffer');
  return [first, previous];
}

function checkUtf8(name: string, column: Data, first: number, last: number): void {
  const values = column.values as Uint8Array;
  const offsets = column.valueOffsets as ArrayLike<number | bigint>;
  if (!isUtf8(values.subarray(first, last))) broken(name, 'utf8 data is not valid UTF-8');
  // Valid as a whole is not enough: each value is decoded alone, so no
  // offset may fall inside a character (on a continuation byte).
  for (let i = 1; i < column.length; i++) {
    const at = Number(offsets[i]);
    if (at < last && ((values[at] ?? 0) & 0xc0) === 0x80) {
      broken(name, `value ${i} starts inside a UTF-8 character`);
    }
  }
}

/** Checks a union column; returns its null rows. */
function checkUnion(name: string, column: Data, type: Union): number {
  const n = column.length;
  const ids = column.typeIds as Int8Array | undefined;
  if (ids === undefined || ids.length < n) broken(name, 'type ids are shorter than the column');
  const dense = DataType.isDenseUnion(type);
  const offsets = column.valueOffsets as Int32Array | undefined;
  if (dense && (offsets === undefined || offsets.length < n)) {
    broken(name, 'union offsets are shorter than the column');
  }
  type.children.forEach((field, i) => {
    const child = column.children[i];
    if (child === undefined) broken(`${name}.${field.name}`, 'union child is missing');
    checkData(`${name}.${field.name}`, child);
  });
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const child = column.children[type.typeIdToChildIndex[ids[i] ?? -1] ?? -1];
    if (child === undefined) broken(name, `row ${i} has type id ${ids[i]}, not one of the union's`);
    const at = dense ? (offsets?.[i] ?? -1) : i;
    if (at < 0 || at >= child.length) broken(name, `row ${i} lies outside its union child`);
    if (!child.getValid(at)) nulls++;
  }
  return nulls;
}

function checkDictionary(name: string, column: Data): void {
  const n = column.length;
  const indices = column.values as ArrayLike<number | bigint> | undefined;
  if (indices === undefined || indices.length < n) {
    broken(name, `dictionary indices hold ${indices?.length ?? 0} of ${n} values`);
  }
  const dictionary = column.dictionary;
  if (dictionary === undefined) broken(name, 'dictionary-encoded column without its dictionary');
  for (const chunk of dictionary.data as readonly Data[]) checkData(`${name} (dictionary)`, chunk);
  const size = dictionary.length;
  const bitmap = column.nullBitmap as Uint8Array | undefined;
  const hasNulls = column.nullCount > 0 && bitmap !== undefined;
  for (let i = 0; i < n; i++) {
    if (
      hasNulls &&
      (((bitmap[(column.offset + i) >> 3] ?? 0) >> ((column.offset + i) & 7)) & 1) === 0
    )
      continue;
    const index = Number(indices[i]);
    if (!(index >= 0 && index < size)) {
      broken(name, `row ${i} has dictionary index ${index}, the dictionary holds ${size}`);
    }
  }
}

function only(name: string, column: Data): Data {
  const child = column.children[0];
  if (child === undefined) broken(name, 'list values are missing');
  return child;
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
