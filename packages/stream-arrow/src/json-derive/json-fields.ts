import type { BatchSchema } from '../batch-schema.js';
import { ArrowBatchError } from '../errors.js';
import type { Row } from '../batch-builder.js';

/** What a record carries besides its payload, for a field to take. */
export type RecordMetaField = 'offset' | 'timestamp' | 'topic' | 'partition';

/**
 * Where one column's value comes from: a path into the JSON payload (`"a.b"`,
 * or the keys as an array when a key holds a dot), or the record's metadata
 * (`timestamp` is a Date, scaled to a timestamp column's unit).
 */
export type JsonFieldSource = string | readonly string[] | { readonly meta: RecordMetaField };

/**
 * A row mapping declared as data rather than written as a function, so that
 * it can run on a worker thread: each column of the schema from its source
 * here, or from the payload's key of the column's own name when not named.
 */
export type JsonFields = Readonly<Record<string, JsonFieldSource>>;

/** The record a declared mapping reads besides the payload. */
export interface RecordMeta {
  readonly offset: number;
  readonly timestamp: number;
  readonly topic: string;
  readonly partition: number;
}

type Take = (value: unknown, meta: RecordMeta) => unknown;

const META: readonly RecordMetaField[] = ['offset', 'timestamp', 'topic', 'partition'];

/**
 * The row of a parsed JSON payload under a declared mapping, checked once
 * against the schema: a field the schema does not have, an empty path or an
 * unknown metadata name is refused here, naming the field.
 */
export function jsonRow(
  schema: BatchSchema,
  fields: JsonFields = {},
): (value: unknown, meta: RecordMeta) => Row {
  const names = new Set(schema.fields.map((f) => f.name));
  for (const name of Object.keys(fields)) {
    if (!names.has(name))
      invalid(name, 'the JSON field mapping names a field the schema does not have');
  }
  const takes: [string, Take][] = schema.fields.map((f) => [
    f.name,
    takeOf(f.name, fields[f.name] ?? f.name),
  ]);
  return (value, meta) => {
    const row: Record<string, unknown> = {};
    for (const [name, take] of takes) row[name] = take(value, meta);
    return row;
  };
}

function takeOf(field: string, source: JsonFieldSource): Take {
  if (typeof source === 'object' && !Array.isArray(source)) {
    const { meta } = source as { meta: unknown };
    if (!META.includes(meta as RecordMetaField)) {
      invalid(
        field,
        `the mapping's meta must be one of ${META.join(', ')}, not ${JSON.stringify(meta)}`,
      );
    }
    if (meta === 'timestamp') return (_, m) => new Date(m.timestamp);
    const key = meta as Exclude<RecordMetaField, 'timestamp'>;
    return (_, m) => m[key];
  }
  if (typeof source !== 'string' && !Array.isArray(source)) {
    invalid(field, `the mapping must be a path or { meta }, not ${JSON.stringify(source)}`);
  }
  const keys = typeof source === 'string' ? source.split('.') : (source as readonly unknown[]);
  if (keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === '')) {
    invalid(field, `the mapping's path ${JSON.stringify(source)} holds an empty key`);
  }
  const path = keys as readonly string[];
  if (path.length === 1) {
    const [key] = path as [string];
    return (value) => own(value, key);
  }
  return (value) => {
    let at = value;
    for (const key of path) at = own(at, key);
    return at;
  };
}

/** An own property of a JSON object, never one of Object.prototype's. */
function own(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

function invalid(field: string, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_INPUT_INVALID', reason, { field });
}
