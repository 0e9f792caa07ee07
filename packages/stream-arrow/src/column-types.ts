import {
  Binary,
  Bool,
  DateDay,
  Float64,
  Int32,
  Int64,
  TimestampMicrosecond,
  TimestampNanosecond,
  Utf8,
  type DataType,
} from 'apache-arrow';

/**
 * The column types a batch may hold: the set the Zerobus Arrow path and the
 * file sinks agree on. Deliberately no dictionary type and no inference: a
 * table that expects utf8 rejects a dictionary-encoded column, so every type
 * is stated. Timestamps are always UTC.
 *
 * Accepted JavaScript values (null or undefined = null):
 * - boolean:   boolean
 * - int32:     integer number in [-2^31, 2^31)
 * - int64:     bigint in [-2^63, 2^63), or a safe-integer number
 * - float64:   number (NaN and infinities included)
 * - utf8:      string (a lone surrogate is written as U+FFFD, as TextEncoder does)
 * - binary:    Uint8Array (Buffer included)
 * - timestamp: bigint or safe-integer number in the column's unit since the
 *              epoch, or a Date (its milliseconds scaled to the unit)
 * - date32:    integer number of days since the epoch, or a Date (its UTC day)
 */
export type ColumnType =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'int32' }
  | { readonly kind: 'int64' }
  | { readonly kind: 'float64' }
  | { readonly kind: 'utf8' }
  | { readonly kind: 'binary' }
  | { readonly kind: 'timestamp'; readonly unit: TimestampUnit }
  | { readonly kind: 'date32' };

export type TimestampUnit = 'us' | 'ns';
export type ColumnKind = ColumnType['kind'];

export const COLUMN_KINDS: readonly ColumnKind[] = [
  'boolean',
  'int32',
  'int64',
  'float64',
  'utf8',
  'binary',
  'timestamp',
  'date32',
];

/** Shorthands: `column.int64`, `column.timestamp('us')`. */
export const column = Object.freeze({
  boolean: { kind: 'boolean' } as const,
  int32: { kind: 'int32' } as const,
  int64: { kind: 'int64' } as const,
  float64: { kind: 'float64' } as const,
  utf8: { kind: 'utf8' } as const,
  binary: { kind: 'binary' } as const,
  date32: { kind: 'date32' } as const,
  timestamp: (unit: TimestampUnit) => ({ kind: 'timestamp', unit }) as const,
});

export function arrowTypeOf(type: ColumnType): DataType {
  switch (type.kind) {
    case 'boolean':
      return new Bool();
    case 'int32':
      return new Int32();
    case 'int64':
      return new Int64();
    case 'float64':
      return new Float64();
    case 'utf8':
      return new Utf8();
    case 'binary':
      return new Binary();
    case 'timestamp':
      return type.unit === 'us' ? new TimestampMicrosecond('UTC') : new TimestampNanosecond('UTC');
    case 'date32':
      return new DateDay();
  }
}

export function describeColumnType(type: ColumnType): string {
  return type.kind === 'timestamp' ? `timestamp[${type.unit}, UTC]` : type.kind;
}
