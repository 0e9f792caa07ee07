import { checkStreamFields, refuseStreamSchema, STREAM_FIELD_TYPES } from '../stream-fields.js';
import type { StreamField } from '../transport.js';
import type { NativeArrowField, ZerobusBinding } from './native-binding.js';

/**
 * Our field types and the member of the binding's `ArrowDataType` enum each
 * one maps to. The unsigned integers the enum also has are left out: Delta
 * has no unsigned types, so they could only be widened silently.
 */
const SDK_TYPE_NAMES: Readonly<Record<StreamField['type'], string>> = {
  boolean: 'Boolean',
  int8: 'Int8',
  int16: 'Int16',
  int32: 'Int32',
  int64: 'Int64',
  float32: 'Float32',
  float64: 'Float64',
  utf8: 'Utf8',
  'large-utf8': 'LargeUtf8',
  binary: 'Binary',
  'large-binary': 'LargeBinary',
  date32: 'Date32',
  date64: 'Date64',
  // Both timestamp members are declared with time zone "UTC" by the binding:
  // batches must carry exactly that zone or the schema check refuses them.
  'timestamp-micros': 'TimestampMicros',
  'timestamp-nanos': 'TimestampNanos',
};

export const SUPPORTED_FIELD_TYPES = STREAM_FIELD_TYPES;

/**
 * The stream schema as the binding takes it. The binding turns any enum
 * value it does not know into Utf8 without a word, which would make every
 * batch fail the schema check later with a far less useful message (or,
 * worse, declare a string column): so every field is validated here
 * (checkStreamFields, which the fake transport applies too) and a refusal
 * names the field.
 */
export function toNativeSchemaFields(
  fields: readonly StreamField[],
  binding: Pick<ZerobusBinding, 'ArrowDataType'>,
): NativeArrowField[] {
  checkStreamFields(fields);
  return fields.map((field, i) => {
    const sdkName = SDK_TYPE_NAMES[field.type];
    const dataType = binding.ArrowDataType[sdkName];
    if (typeof dataType !== 'number' || !Number.isInteger(dataType))
      throw refuseStreamSchema(
        `fields[${i}] "${field.name}"`,
        `the native binding has no ArrowDataType.${sdkName}`,
      );
    return { name: field.name, dataType, nullable: field.nullable };
  });
}
