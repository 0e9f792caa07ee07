import {
  Bool,
  DateDay,
  Float64,
  Int32,
  Int64,
  makeData,
  TimestampMicrosecond,
  TimestampNanosecond,
  type Data,
} from 'apache-arrow';
import type { FieldSpec } from './batch-schema.js';
import { freshMemory, type ColumnMemory } from './column-memory.js';
import { toBoolean, toDate32, toFloat64, toInt32, toInt64, toTimestamp } from './column-values.js';
import { ValidityBitmap } from './validity-bitmap.js';

/**
 * Fixed-width columns straight into typed arrays: one pass, one check per
 * value, no builder objects. A typed array of exactly the column's storage
 * (BigInt64Array for int64 and timestamps, Int32Array for int32 and date32,
 * Float64Array for float64) is taken as a column without nulls and copied
 * in one memcpy: the batch must not change if the caller reuses its array.
 */
export function fixedWidthColumn(
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  memory: ColumnMemory = freshMemory,
): Data {
  const length = values.length;
  const validity = new ValidityBitmap(spec, length, memory);
  // Called after the values are filled: the validity is only known then.
  const props = () => ({ length, nullCount: validity.nullCount, nullBitmap: validity.buffer });
  const type = spec.type;
  switch (type.kind) {
    case 'int64': {
      const data =
        key === undefined && values instanceof BigInt64Array
          ? copied(memory.bigInt64(length), values)
          : int64s(memory, spec, values, key, validity);
      return makeData({ type: new Int64(), ...props(), data });
    }
    case 'timestamp': {
      const data =
        key === undefined && values instanceof BigInt64Array
          ? copied(memory.bigInt64(length), values)
          : int64s(memory, spec, values, key, validity, (v, r) =>
              toTimestamp(v, spec, type.unit, r),
            );
      const arrow =
        type.unit === 'us' ? new TimestampMicrosecond('UTC') : new TimestampNanosecond('UTC');
      return makeData({ type: arrow, ...props(), data });
    }
    case 'int32': {
      const data =
        key === undefined && values instanceof Int32Array
          ? copied(memory.int32(length), values)
          : int32s(memory, spec, values, key, validity, toInt32);
      return makeData({ type: new Int32(), ...props(), data });
    }
    case 'date32': {
      const data =
        key === undefined && values instanceof Int32Array
          ? copied(memory.int32(length), values)
          : int32s(memory, spec, values, key, validity, toDate32);
      return makeData({ type: new DateDay(), ...props(), data });
    }
    case 'float64': {
      const data =
        key === undefined && values instanceof Float64Array
          ? copied(memory.float64(length), values)
          : float64s(memory, spec, values, key, validity);
      return makeData({ type: new Float64(), ...props(), data });
    }
    case 'boolean': {
      const data = booleans(memory, spec, values, key, validity);
      return makeData({ type: new Bool(), ...props(), data });
    }
    case 'utf8':
    case 'binary':
      throw new TypeError(`${type.kind} is not a fixed-width column type`);
  }
}

/** A row object; `key` names the property a column is read from. */
type Fields = Readonly<Record<string, unknown>>;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

type Convert<T> = (value: unknown, row: number) => T;

/** `into`, holding a copy of `from` (the same length): one memcpy. */
function copied<T extends BigInt64Array | Int32Array | Float64Array>(into: T, from: T): T {
  into.set(from as never);
  return into;
}

function int64s(
  memory: ColumnMemory,
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  validity: ValidityBitmap,
  convert: Convert<bigint> = (v, r) => toInt64(v, spec, r),
): BigInt64Array {
  const out = memory.bigInt64(values.length);
  for (let row = 0; row < values.length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (v === null || v === undefined) validity.setNull(row, v);
    else if (typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX) out[row] = v;
    else out[row] = convert(v, row);
  }
  return out;
}

function int32s(
  memory: ColumnMemory,
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  validity: ValidityBitmap,
  convert: (value: unknown, spec: FieldSpec, row: number) => number,
): Int32Array {
  const out = memory.int32(values.length);
  for (let row = 0; row < values.length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (v === null || v === undefined) validity.setNull(row, v);
    else out[row] = convert(v, spec, row);
  }
  return out;
}

function float64s(
  memory: ColumnMemory,
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  validity: ValidityBitmap,
) {
  const out = memory.float64(values.length);
  for (let row = 0; row < values.length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (typeof v === 'number') out[row] = v;
    else if (v === null || v === undefined) validity.setNull(row, v);
    else out[row] = toFloat64(v, spec, row);
  }
  return out;
}

function booleans(
  memory: ColumnMemory,
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  validity: ValidityBitmap,
) {
  const out = memory.bytes((values.length + 7) >> 3);
  for (let row = 0; row < values.length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (v === null || v === undefined) validity.setNull(row, v);
    else if (toBoolean(v, spec, row)) out[row >> 3] = (out[row >> 3] ?? 0) | (1 << (row & 7));
  }
  return out;
}
