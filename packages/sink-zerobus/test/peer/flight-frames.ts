import { Message, tableFromIPC, type Schema } from 'apache-arrow';

/**
 * Reading the Arrow IPC messages that arrive in FlightData: `data_header`
 * is one IPC Message flatbuffer, `data_body` its body. A batch is decoded by
 * framing the connection's schema message and the batch message back into
 * an IPC stream, which is what the apache-arrow reader takes.
 */

export function decodeSchema(header: Buffer): Schema {
  const message = Message.decode(header);
  if (!message.isSchema())
    throw new Error(`expected a schema message, got type ${message.headerType}`);
  return message.header();
}

/** Rows in a record batch message (a message of another type is a protocol error). */
export function rowCountOf(header: Buffer): number {
  const message = Message.decode(header);
  if (!message.isRecordBatch())
    throw new Error(`expected a record batch message, got type ${message.headerType}`);
  return message.header().length;
}

/** `name:type:nullable` per field, to compare a received schema with the table's. */
export function describeSchema(schema: Schema): string[] {
  return schema.fields.map(
    (f) => `${f.name}:${String(f.type)}:${f.nullable ? 'null' : 'not null'}`,
  );
}

/** The batch's rows as plain objects (int64 as bigint, binary as Uint8Array). */
export function decodeRows(
  schemaHeader: Buffer,
  header: Buffer,
  body: Buffer,
): Record<string, unknown>[] {
  const bodyLength = Message.decode(header).bodyLength;
  const padded =
    body.length >= bodyLength
      ? body
      : Buffer.concat([body, Buffer.alloc(bodyLength - body.length)]);
  const ipc = Buffer.concat([frame(schemaHeader, Buffer.alloc(0)), frame(header, padded), END]);
  return tableFromIPC(ipc)
    .toArray()
    .map((row: { toJSON(): Record<string, unknown> }) => row.toJSON());
}

const END = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** Continuation marker, metadata length (padded to 8), metadata, padding, body. */
function frame(metadata: Buffer, body: Buffer): Buffer {
  const padded = Math.ceil(metadata.length / 8) * 8;
  const prefix = Buffer.alloc(8);
  prefix.writeInt32LE(-1, 0);
  prefix.writeInt32LE(padded, 4);
  return Buffer.concat([prefix, metadata, Buffer.alloc(padded - metadata.length), body]);
}
