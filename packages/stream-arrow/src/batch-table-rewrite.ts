import { Bounds } from './message-bounds.js';
import { ArrowBatchError } from './errors.js';
import { MessageHeader } from 'apache-arrow';

/**
 * Rewriting the `RecordBatch` table of a record or dictionary batch message
 * (Message.fbs: slots 0 length i64, 1 nodes [FieldNode 16 bytes], 2 buffers
 * [Buffer {offset i64, length i64}], 3 compression BodyCompression {codec
 * u8, method u8}, 4 variadicBufferCounts [i64]) for a new body layout: what
 * body (de)compression needs. The message is not rebuilt: a new RecordBatch
 * table is appended after the existing metadata, the one reference to it
 * (the message's `header`, or a dictionary batch's `data`) is re-pointed
 * there, and the message's `bodyLength` is patched in place. Everything else
 * (version, custom metadata, dictionary id) stays byte-identical; the old
 * table becomes unreferenced bytes, which FlatBuffers readers ignore.
 * Every position is found through the bounds-checked walker.
 */
export interface BufferRegion {
  readonly offset: number;
  readonly length: number;
}

export interface BodyCompression {
  readonly codec: number;
  readonly method: number;
}

const MESSAGE = { header: 2, bodyLength: 3 } as const;
const RB = { length: 0, nodes: 1, buffers: 2, compression: 3, variadic: 4 } as const;
const DICTIONARY_DATA = 1;

export function rewriteRecordBatch(
  metadata: Uint8Array,
  headerType: MessageHeader,
  offset: number,
  buffers: readonly BufferRegion[],
  compression: BodyCompression | undefined,
  bodyLength: number,
): Uint8Array {
  const b = new Bounds(metadata, offset);
  const root = b.table(b.u32(0), 'message');
  let owner = root;
  let slot: number = MESSAGE.header;
  if (headerType === MessageHeader.DictionaryBatch) {
    const dictionary = b.child(root, MESSAGE.header, 'dictionary batch');
    if (dictionary === undefined) fail(offset, 'a dictionary batch without its header');
    owner = dictionary;
    slot = DICTIONARY_DATA;
  }
  const referenceAt = b.field(owner, slot);
  const batch = b.child(owner, slot, 'record batch');
  if (referenceAt === undefined || batch === undefined) {
    return fail(offset, 'a batch message without its RecordBatch table');
  }
  const nodes = b.vectorBytes(batch, RB.nodes, 16, 'field nodes') ?? new Uint8Array(0);
  const variadic = b.vectorBytes(batch, RB.variadic, 8, 'variadic buffer counts');
  const lengthAt = b.field(batch, RB.length);
  const bodyLengthAt = b.field(root, MESSAGE.bodyLength);
  if (bodyLengthAt === undefined && bodyLength !== 0) {
    fail(offset, 'a message without a bodyLength field to update');
  }
  const base = pad8(metadata.byteLength);
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
  const out = new Uint8Array(pad8(at));
  out.set(metadata);
  const view = new DataView(out.buffer);
  // vtable: size, table size, then the field offsets within the table.
  const fields = [8, 4, 16, compression === undefined ? 0 : 20, variadic === undefined ? 0 : 24];
  view.setUint16(base, 4 + 2 * fields.length, true);
  view.setUint16(base + 2, 32, true);
  fields.forEach((o, i) => view.setUint16(base + 4 + 2 * i, o, true));
  view.setInt32(table, table - base, true);
  if (lengthAt !== undefined) out.copyWithin(table + 8, lengthAt, lengthAt + 8);
  reference(view, table + 4, nodesAt);
  view.setUint32(nodesAt, nodes.byteLength / 16, true);
  out.set(nodes, nodesAt + 4);
  reference(view, table + 16, buffersAt);
  view.setUint32(buffersAt, buffers.length, true);
  buffers.forEach((r, i) => {
    view.setBigInt64(buffersAt + 4 + 16 * i, BigInt(r.offset), true);
    view.setBigInt64(buffersAt + 12 + 16 * i, BigInt(r.length), true);
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
  reference(view, referenceAt, table);
  if (bodyLengthAt !== undefined) view.setBigInt64(bodyLengthAt, BigInt(bodyLength), true);
  return out;
}

export function pad8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

function reference(view: DataView, at: number, target: number): void {
  view.setUint32(at, target - at, true);
}

function fail(offset: number, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset });
}
