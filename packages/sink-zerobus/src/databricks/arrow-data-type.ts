import { ZerobusSinkError } from '../errors.js';
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

// Object.keys loses the key type; the record above is keyed by exactly these.
export const SUPPORTED_FIELD_TYPES = Object.keys(SDK_TYPE_NAMES) as readonly StreamField['type'][];

/**
 * The stream schema as the binding takes it. The binding turns any enum
 * value it does not know into Utf8 without a word, which would make every
 * batch fail the schema check later with a far less useful message (or,
 * worse, declare a string column): so every field is validated here and a
 * refusal names the field.
 */
export function toNativeSchemaFields(
  fields: readonly StreamField[],
  binding: Pick<ZerobusBinding, 'ArrowDataType'>,
): NativeArrowField[] {
  if (fields.length === 0) throw refuse('fields', 'a stream needs at least one field');
  const seen = new Set<string>();
  return fields.map((field, i) => {
    // Fields can come from untyped configuration: check what the types promise.
    const untyped = field as unknown as Record<string, unknown>;
    const name = untyped['name'];
    const at = `fields[${i}]`;
    if (typeof name !== 'string' || name.length === 0)
      throw refuse(at, 'name must be a non-empty string');
    const where = `${at} "${name}"`;
    if (seen.has(name)) throw refuse(where, 'the name appears twice');
    seen.add(name);
    if (typeof untyped['nullable'] !== 'boolean')
      throw refuse(where, 'nullable must be true or false');
    const type = untyped['type'];
    const sdkName =
      typeof type === 'string' && Object.hasOwn(SDK_TYPE_NAMES, type)
        ? SDK_TYPE_NAMES[type as StreamField['type']] // own key, checked just above
        : undefined;
    if (sdkName === undefined)
      throw refuse(
        where,
        `type ${JSON.stringify(type)} is not supported by the Zerobus Arrow path (supported: ${SUPPORTED_FIELD_TYPES.join(', ')})`,
      );
    const dataType = binding.ArrowDataType[sdkName];
    if (typeof dataType !== 'number' || !Number.isInteger(dataType))
      throw refuse(where, `the native binding has no ArrowDataType.${sdkName}`);
    return { name, dataType, nullable: field.nullable };
  });
}

function refuse(where: string, reason: string): ZerobusSinkError {
  return new ZerobusSinkError('fatal-config', `stream schema ${where}: ${reason}`);
}
