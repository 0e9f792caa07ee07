import { Type, type Data, type DataType, type Field, type Schema } from 'apache-arrow';
import { isoDate, isoTimestamp } from '../src/iso-time.js';

/**
 * The rendering of rows as JSON text that stream-arrow used before it
 * rendered bytes (src/row-json.ts): each value through `toString`,
 * `JSON.stringify` and string concatenation. Kept here as the reference the
 * byte renderer must match byte for byte; the refusals of types it does not
 * read are planRows' own and are left out.
 */
type ColumnRender = (data: Data) => (row: number) => string;

export function textRows(schema: Schema, datas: readonly Data[]): (row: number) => string {
  const fields: readonly Field<DataType>[] = schema.fields;
  const bound = fields.map((field, i) => {
    const data = datas[i];
    if (data === undefined) throw new Error(`column ${i} is missing from the batch`);
    const key = `${JSON.stringify(field.name)}:`;
    return { key, value: renderOf(field.type)(data), valid: validity(data) };
  });
  return (row) => {
    let json = '{';
    for (let i = 0; i < bound.length; i++) {
      const c = bound[i];
      if (c === undefined) continue;
      if (i > 0) json += ',';
      json += c.key;
      json += c.valid(row) ? c.value(row) : 'null';
    }
    return json + '}';
  };
}

function renderOf(type: DataType): ColumnRender {
  switch (type.typeId) {
    case Type.Null:
      return () => () => 'null';
    case Type.Bool:
      return (data) => {
        const bits = data.values as Uint8Array;
        return (row) => {
          const bit = data.offset + row;
          return ((bits[bit >> 3] ?? 0) >> (bit & 7)) & 1 ? 'true' : 'false';
        };
      };
    case Type.Int: {
      const wide = (type as DataType<Type.Int> & { bitWidth: number }).bitWidth === 64;
      return (data) => {
        const values = data.values as ArrayLike<number | bigint>;
        return wide ? (row) => `"${String(values[row])}"` : (row) => String(values[row]);
      };
    }
    case Type.Float: {
      return (data) => {
        const values = data.values as Float32Array | Float64Array;
        return (row) => float(values[row] ?? Number.NaN);
      };
    }
    case Type.Utf8:
      return (data) => {
        const { text, offsets } = varBytes(data);
        return (row) => JSON.stringify(text.toString('utf8', offsets[row], offsets[row + 1]));
      };
    case Type.Binary:
      return (data) => {
        const { text, offsets } = varBytes(data);
        return (row) => `"${text.toString('base64', offsets[row], offsets[row + 1])}"`;
      };
    case Type.Date: {
      return (data) => {
        const values = data.values as Int32Array;
        return (row) => `"${isoDate(values[row] ?? 0)}"`;
      };
    }
    case Type.Timestamp: {
      const t = type as DataType<Type.Timestamp> & { unit: number; timezone?: string | null };
      // apache-arrow leaves the zone undefined, null or '' when there is none.
      const zoned = typeof t.timezone === 'string' && t.timezone.length > 0;
      return (data) => {
        const values = data.values as BigInt64Array;
        return (row) => `"${isoTimestamp(values[row] ?? 0n, t.unit, zoned)}"`;
      };
    }
    default:
      throw new Error(`type id ${type.typeId} is not rendered`);
  }
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

function varBytes(data: Data): { text: Buffer; offsets: Int32Array } {
  const values = data.values as Uint8Array;
  return {
    text: Buffer.from(values.buffer, values.byteOffset, values.byteLength),
    offsets: data.valueOffsets as Int32Array,
  };
}

function float(v: number): string {
  if (Number.isFinite(v)) return Object.is(v, -0) ? '-0' : String(v);
  return Number.isNaN(v) ? '"NaN"' : v > 0 ? '"Infinity"' : '"-Infinity"';
}
