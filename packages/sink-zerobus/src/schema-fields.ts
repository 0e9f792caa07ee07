import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import type { BatchSchema, ColumnType } from '@thalweg/stream-arrow';
import type { StreamField } from './transport.js';

/** The stream field type of a stream-arrow column type (timestamps are UTC on both sides). */
function fieldTypeOfColumn(type: ColumnType): StreamField['type'] {
  switch (type.kind) {
    case 'boolean':
    case 'int32':
    case 'int64':
    case 'float64':
    case 'utf8':
    case 'binary':
    case 'date32':
      return type.kind;
    case 'timestamp':
      return type.unit === 'us' ? 'timestamp-micros' : 'timestamp-nanos';
  }
}

/**
 * The Zerobus stream fields of the batches `schema` builds, in the order of
 * its Arrow schema: each field with its type and nullability, then
 * `_twg_record_id` when the schema adds it (`hex` as non-null utf8,
 * `binary` as non-null binary). A schema declared once thus serves both the
 * batch builder and the stream, and a batch built for it always matches
 * the stream's declared fields.
 */
export function streamFieldsOf(schema: BatchSchema): StreamField[] {
  const fields: StreamField[] = schema.fields.map((f) => ({
    name: f.name,
    type: fieldTypeOfColumn(f.type),
    nullable: f.nullable,
  }));
  if (schema.recordId !== 'none') {
    fields.push({
      name: RECORD_ID_COLUMN,
      type: schema.recordId === 'hex' ? 'utf8' : 'binary',
      nullable: false,
    });
  }
  return fields;
}
