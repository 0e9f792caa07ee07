import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { Field, Schema } from 'apache-arrow';
import { arrowTypeOf, COLUMN_KINDS, type ColumnType } from './column-types.js';
import { ArrowBatchError } from './errors.js';

/** One column: its name, its type, and whether it may hold nulls (always stated). */
export interface FieldSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
}

/**
 * How the builder adds `_twg_record_id` (ADR 0003), when the stream asks for
 * it: `hex` as 32 lower-case hex digits in a utf8 column (the stored form the
 * ADR names), `binary` as the 16 raw bytes. Either way it is the LAST
 * column, non-nullable, so the caller's field indexes are unchanged.
 */
export type RecordIdEncoding = 'none' | 'hex' | 'binary';

export interface BatchSchemaDefinition {
  readonly fields: readonly FieldSpec[];
  readonly recordId?: RecordIdEncoding;
}

/**
 * An explicit batch schema, validated once: the builder never infers a type
 * or a nullability, and the Arrow schema it produces carries no metadata, so
 * it equals a table's declared schema exactly (what the Zerobus Arrow path
 * demands of every batch).
 */
export class BatchSchema {
  readonly fields: readonly FieldSpec[];
  readonly recordId: RecordIdEncoding;
  readonly arrow: Schema;

  private constructor(fields: readonly FieldSpec[], recordId: RecordIdEncoding) {
    this.fields = fields;
    this.recordId = recordId;
    const arrowFields = fields.map((f) => new Field(f.name, arrowTypeOf(f.type), f.nullable));
    if (recordId !== 'none') {
      const type = arrowTypeOf(recordId === 'hex' ? { kind: 'utf8' } : { kind: 'binary' });
      arrowFields.push(new Field(RECORD_ID_COLUMN, type, false));
    }
    this.arrow = new Schema(arrowFields);
  }

  /** Validates a definition, typed or straight from configuration; errors name the path. */
  static define(definition: BatchSchemaDefinition): BatchSchema {
    const input: unknown = definition;
    if (typeof input !== 'object' || input === null) invalid('(root)', 'must be an object');
    const { fields, recordId = 'none' } = input as { fields?: unknown; recordId?: unknown };
    if (!Array.isArray(fields) || fields.length === 0) {
      invalid('fields', 'must be a non-empty array of field definitions');
    }
    if (recordId !== 'none' && recordId !== 'hex' && recordId !== 'binary') {
      invalid('recordId', `must be "none", "hex" or "binary", not ${JSON.stringify(recordId)}`);
    }
    const seen = new Set<string>();
    const checked = (fields as readonly unknown[]).map((raw, i) => {
      const spec = checkField(raw, `fields[${i}]`);
      if (seen.has(spec.name)) invalid(`fields[${i}].name`, `"${spec.name}" is defined twice`);
      seen.add(spec.name);
      return spec;
    });
    return new BatchSchema(Object.freeze(checked), recordId);
  }

  /** The number of columns in a built batch, the record id column included. */
  get width(): number {
    return this.arrow.fields.length;
  }
}

function checkField(raw: unknown, path: string): FieldSpec {
  if (typeof raw !== 'object' || raw === null) invalid(path, 'must be an object');
  const { name, type, nullable } = raw as Record<string, unknown>;
  if (typeof name !== 'string' || name.length === 0) {
    invalid(`${path}.name`, 'must be a non-empty string');
  }
  if (name === RECORD_ID_COLUMN) {
    invalid(`${path}.name`, `"${RECORD_ID_COLUMN}" is reserved: set recordId to have it added`);
  }
  if (typeof nullable !== 'boolean') {
    invalid(`${path}.nullable`, 'must be stated as true or false: nullability is never guessed');
  }
  return Object.freeze({ name, type: checkType(type, `${path}.type`), nullable });
}

function checkType(raw: unknown, path: string): ColumnType {
  const kind = (raw as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !(COLUMN_KINDS as readonly string[]).includes(kind)) {
    invalid(
      `${path}.kind`,
      `must be one of ${COLUMN_KINDS.join(', ')}, not ${JSON.stringify(kind)}`,
    );
  }
  if (kind === 'timestamp') {
    const unit = (raw as { unit?: unknown }).unit;
    if (unit !== 'us' && unit !== 'ns') {
      invalid(`${path}.unit`, `must be "us" or "ns", not ${JSON.stringify(unit)}`);
    }
    return Object.freeze({ kind, unit });
  }
  return Object.freeze({ kind }) as ColumnType;
}

function invalid(path: string, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_SCHEMA_INVALID', reason, { field: path });
}
