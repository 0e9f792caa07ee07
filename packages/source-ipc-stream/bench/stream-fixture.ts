import { createServer, type Server } from 'node:net';
import {
  Int64,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Field,
  Utf8,
  makeData,
  Struct,
  vectorFromArray,
} from 'apache-arrow';

/**
 * The bytes both readers of the bench are given: one Arrow IPC stream of
 * `rows` rows (id int64, payload utf8 of `payloadBytes`) in batches of
 * `batchRows`, encoded once by apache-arrow's own writer.
 */
export function encodedStream(rows: number, batchRows: number, payloadBytes: number): Uint8Array {
  const schema = new Schema([
    new Field('id', new Int64(), false),
    new Field('payload', new Utf8(), false),
  ]);
  const batches: RecordBatch[] = [];
  for (let start = 0; start < rows; start += batchRows) {
    const count = Math.min(batchRows, rows - start);
    const ids = makeData({
      type: new Int64(),
      length: count,
      nullCount: 0,
      data: BigInt64Array.from({ length: count }, (_, i) => BigInt(start + i)),
    });
    const payloads = vectorFromArray(
      Array.from({ length: count }, (_, i) =>
        `row-${start + i};`.repeat(payloadBytes).slice(0, payloadBytes),
      ),
      new Utf8(),
    );
    const data = makeData({
      type: new Struct(schema.fields),
      length: count,
      nullCount: 0,
      children: [ids, payloads.data[0]!],
    });
    batches.push(new RecordBatch(schema, data));
  }
  return RecordBatchStreamWriter.writeAll(batches).toUint8Array(true);
}

/** A TCP server on 127.0.0.1 that writes `bytes` whole to every connection and ends it. */
export async function serveBytes(bytes: Uint8Array): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { port: address.port, server };
}
