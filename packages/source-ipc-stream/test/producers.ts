import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { Int32, RecordBatchStreamWriter, Table, Utf8, vectorFromArray } from 'apache-arrow';
import type { IpcStreamSource } from '../src/index.js';

/**
 * An IPC stream of rows `from..to-1` (column `id` = the row offset, `payload`
 * of `payloadBytes` characters), `batchRows` rows per record batch, written by
 * apache-arrow's own writer; `withEnd: false` leaves out the end marker.
 */
export function ipcRows(
  from: number,
  to: number,
  batchRows: number,
  payloadBytes = 4,
  withEnd = true,
): Uint8Array {
  const ids = Array.from({ length: to - from }, (_, i) => from + i);
  // Plain utf8 (tableFromArrays would dictionary-encode the strings).
  const table = new Table({
    id: vectorFromArray(ids, new Int32()),
    payload: vectorFromArray(
      ids.map((id) => String(id).padEnd(payloadBytes, 'x')),
      new Utf8(),
    ),
  });
  const bytes = ipcStreamOf(table, batchRows);
  return withEnd ? bytes : bytes.subarray(0, bytes.byteLength - 8);
}

/** `table` as an IPC stream of record batches of `batchRows` rows, with its end marker. */
export function ipcStreamOf(table: Table, batchRows: number): Uint8Array {
  const batches = [];
  for (let at = 0; at < table.numRows; at += batchRows) {
    batches.push(...table.slice(at, at + batchRows).batches);
  }
  return RecordBatchStreamWriter.writeAll(batches).toUint8Array(true);
}

export async function listen(
  server: Server | HttpServer,
  at: number | string = 0,
): Promise<number> {
  server.listen(at);
  await once(server, 'listening');
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** A TCP server running `serve` per connection; closed with `close`. */
export async function tcpProducer(serve: (socket: Socket, n: number) => void) {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    serve(socket, sockets.length);
  });
  const port = await listen(server);
  return {
    port,
    sockets,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** The one JSON line a resuming consumer writes first. */
export function readRequest(socket: Socket): Promise<{ stream: string; next: number }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      socket.off('data', onData);
      resolve(JSON.parse(text.slice(0, nl)) as { stream: string; next: number });
    };
    socket.on('data', onData);
    socket.once('end', () => {
      reject(new Error('no request line'));
    });
  });
}

export { createHttpServer };

/** Every record's `id`, read to the end (or to the failure, returned with the ids before it). */
export async function readAll(
  source: IpcStreamSource,
): Promise<{ ids: number[]; offsets: number[]; error: unknown }> {
  const ids: number[] = [];
  const offsets: number[] = [];
  try {
    for await (const batch of source.batches(new AbortController().signal)) {
      for (const r of batch.records) {
        offsets.push(r.offset);
        ids.push((JSON.parse(Buffer.from(r.value).toString('utf8')) as { id: number }).id);
      }
    }
  } catch (error) {
    return { ids, offsets, error };
  }
  return { ids, offsets, error: undefined };
}

/** Waits for `condition`, checked on each turn of the event loop, or fails naming `what`. */
export async function waitFor(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export const range = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => from + i);
