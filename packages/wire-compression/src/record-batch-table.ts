import { WireCompressionError } from './errors.js';
import type { FlatTable } from './flatbuffer-table.js';
import { MESSAGE_FIELD, MESSAGE_HEADER, pad8, type IpcMessage } from './ipc-stream-framing.js';

/**
 * The `RecordBatch` table of a record batch or dictionary batch message
 * (Message.fbs): slots 0 length (i64), 1 nodes ([FieldNode], 16-byte
 * structs), 2 buffers ([Buffer] = {offset: i64, length: i64}, relative to
 * the body), 3 compression (BodyCompression {codec: u8, method: u8}, both
 * defaulting to 0 = LZ4_FRAME / BUFFER), 4 variadicBufferCounts ([i64]).
 *
 * Rewriting a batch does not rebuild the message: a new RecordBatch table is
 * appended after the existing metadata and the one reference to it (the
 * message's `header`, or a dictionary batch's `data`) is re-pointed there,
 * and the message's `bodyLength` is patched in place. Everything else in the
 * message (version, custom metadata, dictionary id) stays byte-identical; the
 * old table becomes unreferenced bytes, which FlatBuffers readers ignore.
 */
export interface BufferRegion {
  readonly offset: number;
  readonly length: number;
}

export interface BodyCompression {
  readonly codec: number;
  readonly method: number;
}

export interface RecordBatchTable {
  /** Position (in the metadata) of the u32 reference to the RecordBatch table. */
  readonly referenceAt: number;
  readonly table: FlatTable;
  readonly buffers: readonly BufferRegion[];
  readonly compression: BodyCompression | undefined;
}

const RB = { length: 0, nodes: 1, buffers: 2, compression: 3, variadic: 4 } as const;
const DICTIONARY_DATA = 1;

/** The RecordBatch table of a record or dictionary batch message; undefined for others. */
export function recordBatchOf(message: IpcMessage): RecordBatchTable | undefined {
  let owner: FlatTable = message.root;
  let slot: number = MESSAGE_FIELD.header;
  if (message.headerType === MESSAGE_HEADER.dictionaryBatch) {
    const dictionary = message.root.table(MESSAGE_FIELD.header);
    if (dictionary === undefined) return fail(message, 'dictionary batch without its header');
    owner = dictionary;
    slot = DICTIONARY_DATA;
  } else if (message.headerType !== MESSAGE_HEADER.recordBatch) {
    return undefined;
  }
  const referenceAt = owner.fieldPosition(slot);
  const table = owner.table(slot);
  if (referenceAt === undefined || table === undefined) {
    return fail(message, 'batch message without its RecordBatch table');
  }
  const buffers: BufferRegion[] = [];
  const vector = table.vector(RB.buffers, 16);
  for (let i = 0; vector !== undefined && i < vector.count; i++) {
    const at = vector.start + 16 * i;
    buffers.push({ offset: table.i64At(at), length: table.i64At(at + 8) });
  }
  const c = table.table(RB.compression);
  const compression = c === undefined ? undefined : { codec: c.u8(0, 0), method: c.u8(1, 0) };
  return { referenceAt, table, buffers, compression };
}

/**
 * Appends a RecordBatch table carrying the same length, nodes and variadic
 * counts as `batch` but `buffers` and `compression`, re-points the reference
 * to it and sets the message's body length. Returns new metadata bytes.
 */
export function rewriteRecordBatch(
  message: IpcMessage,
  batch: RecordBatchTable,
  buffers: readonly BufferRegion[],
  compression: BodyCompression | undefined,
  bodyLength: number,
): Uint8Array {
  const old = message.metadata;
  const nodes = rawVector(old, batch.table, RB.nodes, 16) ?? new Uint8Array(0);
  const variadic = rawVector(old, batch.table, RB.variadic, 8);
  const lengthAt = batch.table.fieldPosition(RB.length);
  const base = pad8(old.byteLength);
  const table = base + 16;
  let at = table + 32;
  const nodesAt = at + 4;
  at = nodesAt + 4 + nodes.byteLength;
  const buffersAt = at + 4;
  at = buffersAt + 4 + 16 * buffers.length;
  const variadicAt = variadic === undefined ? 0 : at + 4;
  if (variadic !== undefined) at = variadicAt + 4 + variadic.byteLength;
  const compressionAt = compression === undefined ? 0 : at;
  if (compression !== undefined) at += 16;
  const out = new Uint8Array(at);
  out.set(old);
  const view = new DataView(out.buffer);
  // vtable: size, table size, then the field offsets within the table.
  const fields = [8, 4, 16, compression === undefined ? 0 : 20, variadic === undefined ? 0 : 24];
  view.setUint16(base, 4 + 2 * fields.length, true);
  view.setUint16(base + 2, 32, true);
  fields.forEach((offset, i) => view.setUint16(base + 4 + 2 * i, offset, true));
  view.setInt32(table, table - base, true);
  if (lengthAt !== undefined) out.copyWithin(table + 8, lengthAt, lengthAt + 8);
  reference(view, table + 4, nodesAt);
  view.setUint32(nodesAt, nodes.byteLength / 16, true);
  out.set(nodes, nodesAt + 4);
  reference(view, table + 16, buffersAt);
  view.setUint32(buffersAt, buffers.length, true);
  buffers.forEach((b, i) => {
    view.setBigInt64(buffersAt + 4 + 16 * i, BigInt(b.offset), true);
    view.setBigInt64(buffersAt + 12 + 16 * i, BigInt(b.length), true);
  });
  if (variadic !== undefined) {
    reference(view, table + 24, variadicAt);
    view.setUint32(variadicAt, variadic.byteLength / 8, true);
    out.set(variadic, variadicAt + 4);
  }
  if (compression !== undefined) {
    reference(view, table + 20, compressionAt + 8);
    view.setUint16(compressionAt, 8, true);
    view.setUint16(compressionAt + 2, 8, true);
    view.setUint16(compressionAt + 4, 4, true);
    view.setUint16(compressionAt + 6, 5, true);
    view.setInt32(compressionAt + 8, 8, true);
    view.setUint8(compressionAt + 12, compression.codec);
    view.setUint8(compressionAt + 13, compression.method);
  }
  reference(view, batch.referenceAt, table);
  const bodyLengthAt = message.root.fieldPosition(MESSAGE_FIELD.bodyLength);
  if (bodyLengthAt !== undefined) view.setBigInt64(bodyLengthAt, BigInt(bodyLength), true);
  else if (bodyLength !== 0) fail(message, 'message without a bodyLength field to update');
  return out;
}

/** The element bytes of a vector field, or undefined when the field is absent. */
function rawVector(bytes: Uint8Array, table: FlatTable, slot: number, size: number) {
  const v = table.vector(slot, size);
  return v === undefined ? undefined : bytes.subarray(v.start, v.start + v.count * size);
}

function reference(view: DataView, at: number, target: number): void {
  view.setUint32(at, target - at, true);
}

function fail(message: IpcMessage, reason: string): never {
  throw new WireCompressionError('TWG_IPC_STREAM_INVALID', reason, message.offset);
}
