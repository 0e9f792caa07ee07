import { pad8 } from './batch-table-rewrite.js';

/**
 * How an Arrow IPC message is framed in a stream or file, in one place:
 * the continuation marker (0xFFFFFFFF), the metadata's length padded to a
 * multiple of 8 (i32, little-endian), the metadata flatbuffer, zero padding,
 * then the body. The stream's writer, the body compression, the schema
 * message made from a file's footer and Flight's messages all frame this way.
 */
export const IPC_MESSAGE_PREFIX = 8;

/** The stream's end: a continuation marker and a zero length. */
export const END_OF_STREAM: Readonly<Uint8Array> = new Uint8Array([
  0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
]);

/** Bytes a message's metadata takes framed: prefix, flatbuffer, padding. */
export function framedMetadataBytes(metadataBytes: number): number {
  return IPC_MESSAGE_PREFIX + pad8(metadataBytes);
}

/**
 * Writes `metadata` framed into `out` at `at`, padding zeroed (so `out` may
 * hold old bytes there); returns where the message's body starts.
 */
export function writeFramedMetadata(out: Uint8Array, at: number, metadata: Uint8Array): number {
  const end = at + framedMetadataBytes(metadata.byteLength);
  const view = new DataView(out.buffer, out.byteOffset + at, IPC_MESSAGE_PREFIX);
  view.setInt32(0, -1, true);
  view.setInt32(4, end - at - IPC_MESSAGE_PREFIX, true);
  out.set(metadata, at + IPC_MESSAGE_PREFIX);
  out.fill(0, at + IPC_MESSAGE_PREFIX + metadata.byteLength, end);
  return end;
}

/** One message in a new buffer: `metadata` framed, then `body` (as long as the metadata states). */
export function frameIpcMessage(
  metadata: Uint8Array,
  body: Uint8Array = new Uint8Array(0),
): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(framedMetadataBytes(metadata.byteLength) + body.byteLength);
  out.set(body, writeFramedMetadata(out, 0, metadata));
  return out;
}
