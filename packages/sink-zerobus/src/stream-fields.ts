import { ZerobusSinkError } from './errors.js';
import type { StreamField } from './transport.js';

type FieldType = StreamField['type'];

// Keyed by every member of the union, so the list below cannot miss one.
const FIELD_TYPES: Readonly<Record<FieldType, true>> = {
  boolean: true,
  int8: true,
  int16: true,
  int32: true,
  int64: true,
  float32: true,
  float64: true,
  utf8: true,
  'large-utf8': true,
  binary: true,
  'large-binary': true,
  date32: true,
  date64: true,
  'timestamp-micros': true,
  'timestamp-nanos': true,
};

/** The stream field types the Zerobus Arrow path takes, in the binding's enum order. */
// Object.keys loses the key type; the record above is keyed by exactly these.
export const STREAM_FIELD_TYPES = Object.keys(FIELD_TYPES) as readonly FieldType[];

/**
 * Refuses a stream schema that no stream can be opened with, as the SDK
 * adapter refuses it before connecting (`fatal-config`, naming the field):
 * no fields, a name that is empty or appears twice, a nullability that is
 * not a boolean, a type outside STREAM_FIELD_TYPES. Fields can come from
 * untyped configuration, so what the types promise is checked too.
 */
export function checkStreamFields(fields: readonly StreamField[]): void {
  if (fields.length === 0) throw refuse('fields', 'a stream needs at least one field');
  const seen = new Set<string>();
  fields.forEach((field, i) => {
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
    if (typeof type !== 'string' || !Object.hasOwn(FIELD_TYPES, type))
      throw refuse(
        where,
        `type ${JSON.stringify(type)} is not supported by the Zerobus Arrow path (supported: ${STREAM_FIELD_TYPES.join(', ')})`,
      );
  });
}

/** A refusal of the stream schema at `where` (`fields[2] "ts"`). */
export function refuseStreamSchema(where: string, reason: string): ZerobusSinkError {
  return new ZerobusSinkError('fatal-config', `stream schema ${where}: ${reason}`);
}

const refuse = refuseStreamSchema;
