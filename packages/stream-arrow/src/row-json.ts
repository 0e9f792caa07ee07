import {
  DateUnit,
  Precision,
  Type,
  type Data,
  type DataType,
  type Field,
  type Schema,
} from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import { timestampMillis } from './iso-time.js';
import { RowBuffer } from './row-buffer.js';
import {
  binaryBytes,
  boolBytes,
  dateBytes,
  floatBytes,
  nullBytes,
  smallIntBytes,
  timestampBytes,
  utf8Bytes,
  wideIntBytes,
  type ColumnBytes,
} from './row-bytes.js';

/**
 * An Arrow row as a record value: a JSON object, one key per column in
 * schema order, UTF-8. JSON because a record from an NDJSON file and one
 * from an Arrow file then decode the same way downstream, and because a
 * value must stand alone (a row's own IPC bytes would repeat the schema in
 * every record). The mapping is lossless for every type it accepts:
 *
 * | Arrow type                          | JSON                                           |
 * | ----------------------------------- | ---------------------------------------------- |
 * | any null value, `null` type         | `null`                                         |
 * | bool                                | `true` / `false`                               |
 * | int8/16/32, uint8/16/32             | number                                         |
 * | int64, uint64                       | string of decimal digits (exact beyond 2^53)   |
 * | float32, float64                    | number, shortest round-trip form; `-0` kept;   |
 * |                                     | NaN, ±Infinity as "NaN", "Infinity", "-Infinity" |
 * | utf8                                | string                                         |
 * | binary                              | string, standard base64 with padding           |
 * | date32 (days)                       | "YYYY-MM-DD"                                   |
 * | timestamp (s, ms, us, ns)           | "YYYY-MM-DDTHH:MM:SS[.fff…]", exactly the      |
 * |                                     | unit's digits; `Z` if the type has a time zone |
 *
 * Refused, naming the column: float16, date64, decimals, times, durations,
 * intervals, large and view types, fixed-size binary, nested types
 * (list, struct, map, union) and dictionaries; also two columns of one name,
 * which one JSON object cannot hold. These are the types stream-arrow's
 * decoded-batch check validates in full; a type it cannot check is not read.
 */
export interface RowPlan {
  /**
   * Binds the plan to one batch's columns; the result renders the rows
   * `[start, end)` into one buffer (see `RenderedRows`).
   */
  bind(columns: readonly Data[]): (start: number, end: number) => RenderedRows;
}

/**
 * Rows rendered back to back into one buffer: row `start + i` is
 * `bytes[ends[i - 1] ?? 0, ends[i])`. One buffer per batch and no string
 * per row is what makes rendering cheap; the cost is that a view of one
 * row keeps the whole buffer alive.
 */
export interface RenderedRows {
  readonly bytes: Buffer;
  readonly ends: Uint32Array;
}

export function planRows(schema: Schema): RowPlan {
  const names = new Set<string>();
  const fields: readonly Field<DataType>[] = schema.fields;
  const columns = fields.map((field, i) => {
    if (names.has(field.name)) {
      unsupported(field.name, 'a second column of this name: a JSON object holds one');
    }
    names.add(field.name);
    return {
      key: Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(field.name)}:`, 'utf8'),
      render: renderOf(field.name, field.type),
    };
  });
  const keyBytes = columns.reduce((n, c) => n + c.key.length, 0);
  return {
    bind(datas) {
      return (start, end) => {
        const rows = Math.max(0, end - start);
        const bound = columns.map((c, i) => {
          const data = datas[i];
          if (data === undefined) throw new Error(`column ${i} is missing from the batch`);
          const nulls = data.typeId === Type.Null || data.nullCount === 0 ? undefined : data;
          return { key: c.key, column: c.render(data, start, end), nulls };
        });
        const estimate = bound.reduce((n, c) => n + c.column.estimate, (keyBytes + 2) * rows);
        const out = new RowBuffer(estimate);
        const ends = new Uint32Array(rows);
        for (let row = start; row < end; row++) {
          if (bound.length === 0) out.byte(0x7b);
          for (const { key, column, nulls } of bound) {
            out.copy(key, 0, key.length);
            if (nulls === undefined || isValid(nulls, row)) column.write(row, out);
            else out.ascii('null');
          }
          out.byte(0x7d);
          ends[row - start] = out.at;
        }
        return { bytes: out.done(), ends };
      };
    },
  };
}

function renderOf(column: string, type: DataType): ColumnBytes {
  switch (type.typeId) {
    case Type.Null:
      return nullBytes;
    case Type.Bool:
      return boolBytes;
    case Type.Int: {
      const int = type as DataType<Type.Int> & { bitWidth: number; isSigned: boolean };
      return int.bitWidth === 64 ? wideIntBytes(int.isSigned) : smallIntBytes;
    }
    case Type.Float: {
      if ((type as DataType<Type.Float> & { precision: Precision }).precision === Precision.HALF) {
        return unsupported(column, `type ${describe(type)} (float16) is not read`);
      }
      return floatBytes;
    }
    case Type.Utf8:
      return utf8Bytes;
    case Type.Binary:
      return binaryBytes;
    case Type.Date: {
      if ((type as DataType<Type.Date> & { unit: DateUnit }).unit !== DateUnit.DAY) {
        return unsupported(column, `type ${describe(type)} (date64) is not read`);
      }
      return dateBytes;
    }
    case Type.Timestamp: {
      const t = type as DataType<Type.Timestamp> & { unit: number; timezone?: string | null };
      // apache-arrow leaves the zone undefined, null or '' when there is none.
      const zoned = typeof t.timezone === 'string' && t.timezone.length > 0;
      return timestampBytes(t.unit, zoned);
    }
    default:
      return unsupported(
        column,
        `type ${describe(type)} is not read (see row-json.ts for the types that are)`,
      );
  }
}

/** Binds to one batch (its message at byte `at`); the result is a row's time in ms, or null. */
export type TimestampPlan = (
  columns: readonly Data[],
  at: number,
) => (row: number) => number | null;

/**
 * The record timestamp from a column: milliseconds since the epoch, or null
 * where the row holds null (the source then uses a time of its own).
 */
export function planTimestamp(schema: Schema, column: string): TimestampPlan {
  const index = schema.fields.findIndex((f) => f.name === column);
  const field = schema.fields[index];
  if (field === undefined) unsupported(column, 'timestampColumn is not a column of the schema');
  const type = field.type as DataType & { unit?: number };
  const isTimestamp = type.typeId === Type.Timestamp;
  if (!isTimestamp && !(type.typeId === Type.Date && type.unit === DateUnit.DAY)) {
    unsupported(column, `timestampColumn has type ${describe(type)}, not a timestamp or date32`);
  }
  return (datas, at) => {
    const data = datas[index];
    if (data === undefined) throw new Error(`column ${index} is missing from the batch`);
    const valid = validity(data);
    return (row) => {
      if (!valid(row)) return null;
      const ms = isTimestamp
        ? timestampMillis((data.values as BigInt64Array)[row] ?? 0n, type.unit ?? 0)
        : BigInt((data.values as Int32Array)[row] ?? 0) * 86_400_000n;
      if (ms < -MAX_MS || ms > MAX_MS) {
        throw new ArrowBatchError(
          'TWG_ARROW_IPC_UNSUPPORTED',
          `row ${row} of the batch holds a time ${ms} ms from the epoch, outside what a record timestamp holds`,
          { offset: at, field: column },
        );
      }
      return Number(ms);
    };
  };
}

/** The range of a JavaScript Date, which is what a record timestamp is read as. */
const MAX_MS = 8_640_000_000_000_000n;

/** Whether `row` of a column with a validity bitmap holds a value. */
function isValid(data: Data, row: number): boolean {
  const bitmap = data.nullBitmap as Uint8Array | undefined;
  if (bitmap === undefined) return true;
  const bit = data.offset + row;
  return (((bitmap[bit >> 3] ?? 0) >> (bit & 7)) & 1) === 1;
}

function validity(data: Data): (row: number) => boolean {
  if (data.typeId === Type.Null) return () => false;
  const bitmap = data.nullBitmap as Uint8Array | undefined;
  if (data.nullCount === 0 || bitmap === undefined) return () => true;
  const offset = data.offset;
  return (row) => {
    const bit = offset + row;
    return (((bitmap[bit >> 3] ?? 0) >> (bit & 7)) & 1) === 1;
  };
}

function unsupported(column: string, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_UNSUPPORTED', reason, { field: column });
}

/** Every concrete DataType renders itself (`Timestamp<MICROSECOND, UTC>`); the base class declares no toString. */
function describe(type: DataType): string {
  return (type as DataType & { toString(): string }).toString();
}
