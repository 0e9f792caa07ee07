import { Bounds } from './message-bounds.js';
import { ArrowBatchError } from './errors.js';
import { frameIpcMessage } from './ipc-message-framing.js';

/**
 * A schema message built around the schema of an IPC file's footer, for
 * files whose writer put the schema only there (apache-arrow's JavaScript
 * file writer does). The footer's bytes are copied whole behind a small
 * `Message` table whose header reference points at the footer's `Schema`
 * table: FlatBuffers references are relative, so every table the schema
 * refers to is found where it was. The message then goes through the same
 * checks as a schema message read from a stream.
 *
 * Layout of the metadata (little-endian):
 *
 * | bytes | what                                                              |
 * | ----- | ----------------------------------------------------------------- |
 * | 0–3   | u32 root: the Message table at 16                                 |
 * | 4–15  | vtable: size 12, table size 12, version @4, type @6, header @8, no body length |
 * | 16–27 | table: i32 16-4, i16 version V5, u8 Schema, pad, u32 header ref   |
 * | 28–31 | padding: the footer stays 8-byte aligned                          |
 * | 32–   | the footer, padded to a multiple of 8                             |
 *
 * Returned framed (ipc-message-framing.ts), as in a stream.
 */
const TABLE = 16;
const FOOTER_AT = 32;
const METADATA_V5 = 4;
const HEADER_SCHEMA = 1;
const FOOTER_SCHEMA = 1;

export function schemaMessageFromFooter(footer: Uint8Array, footerAt: number): Uint8Array {
  const fb = new Bounds(footer, footerAt);
  const schemaTable = fb.child(fb.table(fb.u32(0), 'footer'), FOOTER_SCHEMA, 'footer schema');
  if (schemaTable === undefined) {
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', 'the footer holds no schema', {
      offset: footerAt,
    });
  }
  const metadata = new Uint8Array(FOOTER_AT + footer.byteLength);
  const v = new DataView(metadata.buffer);
  v.setUint32(0, TABLE, true);
  [12, 12, 4, 6, 8, 0].forEach((n, i) => v.setUint16(4 + 2 * i, n, true));
  v.setInt32(TABLE, TABLE - 4, true);
  v.setInt16(TABLE + 4, METADATA_V5, true);
  v.setUint8(TABLE + 6, HEADER_SCHEMA);
  v.setUint32(TABLE + 8, FOOTER_AT + schemaTable - (TABLE + 8), true);
  metadata.set(footer, FOOTER_AT);
  return frameIpcMessage(metadata);
}
