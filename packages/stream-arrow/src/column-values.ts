import type { FieldSpec } from './batch-schema.js';
import type { TimestampUnit } from './column-types.js';
import { ArrowBatchError } from './errors.js';

/**
 * Conversions of one JavaScript value to a column's storage, each refusing
 * what would otherwise be silently wrong: a bigint beyond 64 bits would wrap
 * in a BigInt64Array, a fractional or unsafe number would be rounded, a
 * string in an int column would become NaN. Shared by the column builders
 * and `BatchBuilder.validateRow`, so a row that validates always builds.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const MS_PER_DAY = 86_400_000;
const SCALE_FROM_MS: Record<TimestampUnit, bigint> = { us: 1_000n, ns: 1_000_000n };

export function toInt64(value: unknown, spec: FieldSpec, row: number): bigint {
  if (typeof value === 'bigint') {
    if (value < INT64_MIN || value > INT64_MAX) bad(spec, row, value, 'outside the int64 range');
    return value;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return bad(spec, row, value, 'not a bigint or a safe-integer number');
}

export function toTimestamp(
  value: unknown,
  spec: FieldSpec,
  unit: TimestampUnit,
  row: number,
): bigint {
  if (value instanceof Date) {
    const ms = value.getTime();
    if (Number.isNaN(ms)) bad(spec, row, value, 'an invalid Date');
    // A Date spans +-8.64e15 ms, which in nanoseconds is beyond int64 (about
    // 1677-2262): a BigInt64Array would wrap such a value silently.
    const scaled = BigInt(ms) * SCALE_FROM_MS[unit];
    if (scaled < INT64_MIN || scaled > INT64_MAX)
      bad(spec, row, value, `outside the ${unit} range`);
    return scaled;
  }
  return toInt64(value, spec, row);
}

export function toInt32(value: unknown, spec: FieldSpec, row: number): number {
  // `| 0` also turns -0 into 0, which is what an int32 slot holds anyway.
  if (typeof value === 'number' && (value | 0) === value) return value | 0;
  if (typeof value === 'number' && Number.isInteger(value)) {
    return bad(spec, row, value, 'outside the int32 range');
  }
  return bad(spec, row, value, 'not an integer number');
}

export function toDate32(value: unknown, spec: FieldSpec, row: number): number {
  if (value instanceof Date) {
    const ms = value.getTime();
    if (Number.isNaN(ms)) bad(spec, row, value, 'an invalid Date');
    return Math.floor(ms / MS_PER_DAY);
  }
  return toInt32(value, spec, row);
}

export function toFloat64(value: unknown, spec: FieldSpec, row: number): number {
  return typeof value === 'number' ? value : bad(spec, row, value, 'not a number');
}

export function toBoolean(value: unknown, spec: FieldSpec, row: number): boolean {
  return typeof value === 'boolean' ? value : bad(spec, row, value, 'not a boolean');
}

export function toUtf8(value: unknown, spec: FieldSpec, row: number): string {
  return typeof value === 'string' ? value : bad(spec, row, value, 'not a string');
}

export function toBinary(value: unknown, spec: FieldSpec, row: number): Uint8Array {
  return value instanceof Uint8Array ? value : bad(spec, row, value, 'not a Uint8Array');
}

/** Checks one non-null value against the field's type, without building anything. */
export function checkValue(value: unknown, spec: FieldSpec, row: number): void {
  const type = spec.type;
  switch (type.kind) {
    case 'boolean':
      toBoolean(value, spec, row);
      return;
    case 'int32':
      toInt32(value, spec, row);
      return;
    case 'int64':
      toInt64(value, spec, row);
      return;
    case 'float64':
      toFloat64(value, spec, row);
      return;
    case 'utf8':
      toUtf8(value, spec, row);
      return;
    case 'binary':
      toBinary(value, spec, row);
      return;
    case 'timestamp':
      toTimestamp(value, spec, type.unit, row);
      return;
    case 'date32':
      toDate32(value, spec, row);
      return;
  }
}

function bad(spec: FieldSpec, row: number, value: unknown, why: string): never {
  throw new ArrowBatchError(
    'TWG_ARROW_VALUE_INVALID',
    `${describe(value)} is ${why} (column type ${spec.type.kind})`,
    { field: spec.name, row },
  );
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'bigint') return `bigint ${value}`;
  if (typeof value === 'number') return `number ${value}`;
  if (value instanceof Date) return 'Date';
  if (typeof value === 'object' && value !== null) return Object.prototype.toString.call(value);
  return typeof value;
}
