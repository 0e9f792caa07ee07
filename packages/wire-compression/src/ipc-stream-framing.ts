import { WireCompressionError } from './errors.js';
import { FlatTable } from './flatbuffer-table.js';

/**
 * Arrow IPC streaming format framing: each message is a 0xFFFFFFFF
 * continuation marker, an i32 metadata length (a multiple of 8), the
 * `Message` flatbuffer, then `bodyLength` body bytes; the stream ends with a
 * marker and a zero length. Streams from writers before Arrow 0.15 omit the
 * marker (a bare i32 length); both are read, the modern form is written.
 */

/** `MessageHeader` union tags from Message.fbs. */
export const MESSAGE_HEADER = { schema: 1, dictionaryBatch: 2, recordBatch: 3 } as const;

/** Field slots of the `Message` table (a union takes two: its type, then its value). */
export const MESSAGE_FIELD = { version: 0, headerType: 1, header: 2, bodyLength: 3 } as const;

export interface IpcMessage {
  /** Where the message (its marker or length) starts in the stream. */
  readonly offset: number;
  readonly metadataOffset: number;
  readonly metadata: Uint8Array;
  readonly root: FlatTable;
  readonly headerType: number;
  readonly bodyOffset: number;
  readonly body: Uint8Array;
}

const CONTINUATION = 0xffffffff;

export function readIpcMessages(bytes: Uint8Array): IpcMessage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const messages: IpcMessage[] = [];
  let at = 0;
  for (;;) {
    const left = bytes.byteLength - at;
    if (left === 0) break; // a stream may end without the end-of-stream marker
    if (left < 4) fail(at, `${left} trailing bytes are not a message`);
    let prefix = 4;
    let length = view.getInt32(at, true);
    if (view.getUint32(at, true) === CONTINUATION) {
      if (left < 8) fail(at, 'continuation marker without a metadata length');
      length = view.getInt32(at + 4, true);
      prefix = 8;
    }
    if (length === 0) {
      if (at + prefix !== bytes.byteLength) {
        fail(at + prefix, `${bytes.byteLength - at - prefix} bytes after the end-of-stream marker`);
      }
      break;
    }
    const metadataOffset = at + prefix;
    if (length < 0 || metadataOffset + length > bytes.byteLength) {
      fail(at, `metadata length ${length} does not fit the ${left - prefix} bytes left`);
    }
    const metadata = bytes.subarray(metadataOffset, metadataOffset + length);
    const root = FlatTable.root(metadata, metadataOffset);
    const bodyOffset = metadataOffset + length;
    const bodyLength = root.i64(MESSAGE_FIELD.bodyLength, 0);
    if (bodyLength < 0 || bodyOffset + bodyLength > bytes.byteLength) {
      fail(
        at,
        `body length ${bodyLength} does not fit the ${bytes.byteLength - bodyOffset} bytes left`,
      );
    }
    messages.push({
      offset: at,
      metadataOffset,
      metadata,
      root,
      headerType: root.u8(MESSAGE_FIELD.headerType, 0),
      bodyOffset,
      body: bytes.subarray(bodyOffset, bodyOffset + bodyLength),
    });
    at = bodyOffset + bodyLength;
  }
  if (messages.length === 0) fail(0, 'no IPC message');
  return messages;
}

/**
 * Frames messages as a modern IPC stream ending with the end-of-stream
 * marker. Metadata is padded to 8 bytes here; a body is written as given, so
 * its length must be the `bodyLength` its metadata states.
 */
export function writeIpcMessages(
  messages: readonly { readonly metadata: Uint8Array; readonly body: Uint8Array }[],
): Uint8Array {
  let total = 8;
  for (const m of messages) total += 8 + pad8(m.metadata.byteLength) + m.body.byteLength;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const m of messages) {
    const length = pad8(m.metadata.byteLength);
    view.setUint32(at, CONTINUATION, true);
    view.setInt32(at + 4, length, true);
    out.set(m.metadata, at + 8);
    at += 8 + length;
    out.set(m.body, at);
    at += m.body.byteLength;
  }
  view.setUint32(at, CONTINUATION, true);
  return out;
}

export function pad8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

function fail(offset: number, message: string): never {
  throw new WireCompressionError('TWG_IPC_STREAM_INVALID', message, offset);
}
