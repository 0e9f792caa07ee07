import {
  Binary,
  Bool,
  DateDay,
  DateMillisecond,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  LargeBinary,
  LargeUtf8,
  TimeUnit,
  Timestamp,
  Type,
  Utf8,
  type DataType,
  type Schema,
  util,
} from 'apache-arrow';
import { ZerobusSinkError } from './errors.js';
import type { StreamField } from './transport.js';

type FieldType = StreamField['type'];

/** The Arrow type the SDK expects for each stream field type (timestamps in UTC). */
export function arrowTypeFor(type: FieldType): DataType {
  switch (type) {
    case 'boolean':
      return new Bool();
    case 'int8':
      return new Int8();
    case 'int16':
      return new Int16();
    case 'int32':
      return new Int32();
    case 'int64':
      return new Int64();
    case 'float32':
      return new Float32();
    case 'float64':
      return new Float64();
    case 'utf8':
      return new Utf8();
    case 'large-utf8':
      return new LargeUtf8();
    case 'binary':
      return new Binary();
    case 'large-binary':
      return new LargeBinary();
    case 'date32':
      return new DateDay();
    case 'date64':
      return new DateMillisecond();
    case 'timestamp-micros':
      return new Timestamp(TimeUnit.MICROSECOND, 'UTC');
    case 'timestamp-nanos':
      return new Timestamp(TimeUnit.NANOSECOND, 'UTC');
  }
}

const ALL: readonly FieldType[] = [
  'boolean',
  'int8',
  'int16',
  'int32',
  'int64',
  'float32',
  'float64',
  'utf8',
  'large-utf8',
  'binary',
  'large-binary',
  'date32',
  'date64',
  'timestamp-micros',
  'timestamp-nanos',
];

/** The stream field type of an Arrow type, or a refusal naming the column. */
export function fieldTypeOf(type: DataType, column: string): FieldType {
  for (const candidate of ALL) {
    const t = arrowTypeFor(candidate);
    // Both ways: apache-arrow's comparison is not symmetric. Int32 against a
    // decoded batch's Int_ of 32 bits is false, the other way round true.
    if (util.compareTypes(t, type) || util.compareTypes(type, t)) return candidate;
  }
  throw new ZerobusSinkError(
    'poison-batch',
    `column ${column}: Arrow type ${Type[type.typeId]} has no Zerobus equivalent`,
  );
}

/** A batch schema as stream fields. */
export function fieldsOfSchema(schema: Schema): StreamField[] {
  return schema.fields.map((f) => ({
    name: f.name,
    // apache-arrow types Field.type as any; every field's type is a DataType.
    type: fieldTypeOf(f.type as DataType, f.name),
    nullable: f.nullable,
  }));
}
