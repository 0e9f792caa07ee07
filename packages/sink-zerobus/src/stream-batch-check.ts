import { Message, MessageHeader, type DataType, type Field, type Schema } from 'apache-arrow';
import {
  ArrowBatchError,
  decodeIpcStream,
  scanIpcStream,
  type ScannedMessage,
} from '@thalweg/stream-arrow';
import { arrowTypeFor } from './arrow-fields.js';
import { ZerobusSinkError } from './errors.js';
import type { StreamField, StreamSpec } from './transport.js';

/**
 * What the Zerobus Arrow path demands of one `submit`, checked the way the
 * native binding checks it before a byte goes on the wire: Arrow IPC stream
 * bytes holding exactly one record batch with at least one row, whose
 * schema equals the stream's declared fields exactly — names and order,
 * types (timestamp unit and the "UTC" zone included, no dictionaries),
 * nullability, no field or schema metadata — and whose non-nullable
 * columns hold no nulls. The binding refuses each of these as
 * "Failed to ingest batch: Invalid argument", which the SDK adapter
 * classifies as `poison-batch` (the stream stays healthy, no offset is
 * used); so does this check, naming the field or the message.
 *
 * The binding's message lists the two schemas and leaves finding the
 * difference to the reader; here the first difference is named. Stricter
 * than the binding in one respect: bytes after the end-of-stream marker
 * are refused (the binding ignores them; no Arrow writer produces them).
 */
export function checkStreamBatch(spec: StreamSpec, ipc: Uint8Array): void {
  const at = `${spec.table}: submit refused`;
  let messages: ScannedMessage[];
  try {
    messages = scanIpcStream(ipc);
  } catch (error) {
    throw refuse(`${at}: the payload is not an Arrow IPC stream: ${reason(error)}`, error);
  }
  const first = messages[0];
  if (first?.headerType !== MessageHeader.Schema)
    throw refuse(`${at}: the IPC stream does not start with a schema message`);
  const batches = messages.filter((m) => m.headerType === MessageHeader.RecordBatch);
  if (batches.length === 0) throw refuse(`${at}: the IPC message holds no record batch`);
  if (batches.length > 1)
    throw refuse(
      `${at}: the IPC message holds ${batches.length} record batches (at bytes ${batches.map((b) => b.offset).join(', ')}); exactly one per submit is accepted`,
    );
  const schema = decodeSchema(first, at);
  const mismatch = firstMismatch(schema, spec.fields);
  if (mismatch !== null)
    throw refuse(
      `${at}: the batch schema does not match the stream's declared fields: ${mismatch} (batch: ${describeBatch(schema)}; declared: ${describeDeclared(spec.fields)})`,
    );
  const [batch] = batches;
  if (batch?.rows === 0) throw refuse(`${at}: the record batch is empty (zero rows)`);
  // Values are read only where no codec is needed: a compressed body was
  // framed and bounds-checked by the scan, and its schema checked above.
  if (batch?.compressed === true) return;
  try {
    decodeIpcStream(ipc);
  } catch (error) {
    const field = error instanceof ArrowBatchError ? error.field : undefined;
    const where = field === undefined ? '' : ` field "${field}":`;
    throw refuse(`${at}:${where} ${reason(error)}`, error);
  }
}

/**
 * The part of checkStreamBatch that reads headers only: the payload is an
 * IPC stream whose schema equals the declared fields. The sink runs it
 * before it queues a batch, so the commonest refusal reaches the caller of
 * `submit` (the send, later, is the binding's full check).
 */
export function checkStreamSchema(spec: StreamSpec, ipc: Uint8Array): void {
  const at = `${spec.table}: submit refused`;
  let first: ScannedMessage | undefined;
  try {
    first = scanIpcStream(ipc)[0];
  } catch (error) {
    throw refuse(`${at}: the payload is not an Arrow IPC stream: ${reason(error)}`, error);
  }
  if (first?.headerType !== MessageHeader.Schema)
    throw refuse(`${at}: the IPC stream does not start with a schema message`);
  const schema = decodeSchema(first, at);
  const mismatch = firstMismatch(schema, spec.fields);
  if (mismatch !== null)
    throw refuse(
      `${at}: the batch schema does not match the stream's declared fields: ${mismatch} (batch: ${describeBatch(schema)}; declared: ${describeDeclared(spec.fields)})`,
    );
}

/** The first difference between a batch schema and the declared fields, or null. */
function firstMismatch(schema: Schema, declared: readonly StreamField[]): string | null {
  if (schema.metadata.size > 0)
    return `the batch schema carries metadata (keys ${keys(schema.metadata)}); the stream's carries none`;
  const got: readonly Field[] = schema.fields;
  for (let i = 0; i < Math.max(got.length, declared.length); i++) {
    const g = got[i];
    const d = declared[i];
    if (d === undefined)
      return `field "${g?.name ?? i}" (position ${i}) is not declared by the stream`;
    if (g === undefined) return `declared field "${d.name}" (position ${i}) is missing`;
    if (g.name !== d.name)
      return `position ${i} is field "${g.name}" in the batch, "${d.name}" in the declared fields`;
    // apache-arrow types Field.type as any; every field's type is a DataType.
    const type = g.type as DataType;
    const want = arrowTypeFor(d.type);
    if (!sameType(want, type))
      return `field "${d.name}" has type ${typeName(type)} in the batch, ${typeName(want)} declared (${d.type})`;
    if (g.nullable !== d.nullable)
      return `field "${d.name}" is ${nullability(g.nullable)} in the batch, ${nullability(d.nullable)} declared`;
    if (g.metadata.size > 0)
      return `field "${d.name}" carries metadata (keys ${keys(g.metadata)}); declared fields carry none`;
  }
  return null;
}

/**
 * A decoded type is a generic instance (`Int_` of width 32, not `Int32`),
 * so types are compared by id and rendering, which names the width, the
 * unit, the time zone and a dictionary's index and value types.
 */
function sameType(want: DataType, got: DataType): boolean {
  return want.typeId === got.typeId && typeName(want) === typeName(got);
}

/** Every apache-arrow type renders itself (`Int32`, `Timestamp<MICROSECOND, UTC>`); the typings omit it. */
function typeName(type: DataType): string {
  return String(type as unknown);
}

function decodeSchema(message: ScannedMessage, at: string): Schema {
  try {
    const decoded = Message.decode(message.metadata);
    if (decoded.isSchema()) return decoded.header();
  } catch (error) {
    throw refuse(`${at}: the schema message cannot be read: ${reason(error)}`, error);
  }
  throw refuse(`${at}: the IPC stream does not start with a schema message`);
}

function describeBatch(schema: Schema): string {
  return (
    schema.fields
      .map((f: Field) => `${f.name} ${String(f.type)}${f.nullable ? '' : ' NOT NULL'}`)
      .join(', ') || '(no fields)'
  );
}

function describeDeclared(fields: readonly StreamField[]): string {
  return fields
    .map((f) => `${f.name} ${typeName(arrowTypeFor(f.type))}${f.nullable ? '' : ' NOT NULL'}`)
    .join(', ');
}

const nullability = (nullable: boolean): string => (nullable ? 'nullable' : 'NOT NULL');
const keys = (metadata: ReadonlyMap<string, string>): string => [...metadata.keys()].join(', ');
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function refuse(message: string, cause?: unknown): ZerobusSinkError {
  return new ZerobusSinkError('poison-batch', message, cause);
}
