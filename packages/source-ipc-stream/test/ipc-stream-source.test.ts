import { once } from 'node:events';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ManualClock } from '@thalweg/connector-core';
import { IpcStreamDecoder } from '@thalweg/stream-arrow';
import { afterEach, describe, expect, it } from 'vitest';
import { IpcStreamSource, IpcStreamSourceError, ipcStream } from '../src/index.js';
import {
  createHttpServer,
  ipcRows,
  listen,
  range,
  readAll,
  readRequest,
  tcpProducer,
  waitFor,
} from './producers.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

const p = { topic: 'live', partition: 0 };

describe('IpcStreamSource: one stream to its end marker', () => {
  it('reads a TCP stream to EOS, rows numbered from 0 across batches', async () => {
    const producer = await tcpProducer((s) => s.end(ipcRows(0, 25, 7)));
    cleanup.push(producer.close);
    const source = new IpcStreamSource({
      connection: { kind: 'tcp', host: '127.0.0.1', port: producer.port },
      topic: 'live',
      maxBatchRecords: 4,
    });
    const read = await readAll(source);
    expect(read.error).toBeUndefined();
    expect(read.ids).toEqual(range(0, 25));
    expect(read.offsets).toEqual(range(0, 25));
    expect(source.stats()).toMatchObject({ rows: 25, batches: 4, reconnects: 0 });
    expect(source.origin).toEqual({ kind: 'non-replayable', resumable: false });
  });

  it('reads a Unix socket, an HTTP body and a Readable the same way', async () => {
    const path = join(tmpdir(), `twg-ipc-${process.pid}-${Date.now()}.sock`);
    const unix = createServer((s) => s.end(ipcRows(0, 10, 3)));
    await listen(unix, path);
    cleanup.push(() => unix.close());
    const http = createHttpServer((_, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.apache.arrow.stream' });
      res.end(ipcRows(0, 10, 3));
    });
    const port = await listen(http);
    cleanup.push(() => http.close());
    for (const connection of [
      { kind: 'unix', path } as const,
      { kind: 'http', url: `http://127.0.0.1:${port}/s` } as const,
      { kind: 'readable', readable: Readable.from([ipcRows(0, 10, 3)]) } as const,
    ]) {
      const read = await readAll(new IpcStreamSource({ connection, topic: 'live' }));
      expect(read.error, connection.kind).toBeUndefined();
      expect(read.ids, connection.kind).toEqual(range(0, 10));
    }
  });
});

describe('IpcStreamSource: resumable', () => {
  it('reconnects after a drop and continues exactly: duplicates below next dropped', async () => {
    const clock = new ManualClock();
    const producer = await tcpProducer((s, n) => {
      void readRequest(s).then((req) => {
        if (n === 1) {
          s.write('{"stream":"s-1","first":0}\n');
          // Two whole batches and half of the third, then the connection drops.
          const bytes = ipcRows(0, 30, 5, 4, false);
          s.end(bytes.subarray(0, Math.floor(bytes.byteLength * 0.6)));
          return;
        }
        expect(req.stream).toBe('s-1');
        const first = Math.floor(req.next / 5) * 5 - 5; // restarts a batch early
        s.write(`${JSON.stringify({ stream: 's-1', first })}\n`);
        s.end(ipcRows(first, 30, 5));
      });
    });
    cleanup.push(producer.close);
    const source = new IpcStreamSource({
      connection: { kind: 'tcp', host: '127.0.0.1', port: producer.port },
      topic: 'live',
      resume: true,
      scheduler: clock,
    });
    const done = readAll(source);
    await waitFor(() => clock.scheduled > 0, 'the reconnect backoff');
    clock.advance(10_000);
    const read = await done;
    expect(read.error).toBeUndefined();
    expect(read.ids).toEqual(range(0, 30));
    expect(read.offsets).toEqual(range(0, 30));
    expect(source.stats().reconnects).toBe(1);
    expect(source.stats().duplicatesDropped).toBeGreaterThan(0);
    expect(source.cursorAt(p, 30)).toEqual({ kind: 'stream-token', token: 's-1', nextOffset: 30 });
  });

  it('asks from a sought cursor and fails loudly when the producer no longer holds it', async () => {
    const requests: unknown[] = [];
    const producer = await tcpProducer((s) => {
      void readRequest(s).then((req) => {
        requests.push(req);
        s.end('{"error":"position 40 no longer retained"}\n');
      });
    });
    cleanup.push(producer.close);
    const source = new IpcStreamSource({
      connection: { kind: 'tcp', host: '127.0.0.1', port: producer.port },
      topic: 'live',
      resume: true,
    });
    source.seek(p, { kind: 'stream-token', token: 's-9', nextOffset: 40 });
    const read = await readAll(source);
    expect(requests).toEqual([{ thalweg: 'resume', stream: 's-9', next: 40 }]);
    expect(read.error).toMatchObject({ code: 'TWG_IPC_STREAM_RESUME_REFUSED' });
    expect(String(read.error)).toMatch(/no longer retained/);
  });

  it('fails loudly on HTTP 410, and sends the resume headers', async () => {
    const seen: Record<string, unknown>[] = [];
    const http = createHttpServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(410).end();
    });
    const port = await listen(http);
    cleanup.push(() => http.close());
    const source = new IpcStreamSource({
      connection: { kind: 'http', url: `http://127.0.0.1:${port}/` },
      topic: 'live',
      resume: true,
    });
    source.seek(p, { kind: 'stream-token', token: 's-2', nextOffset: 7 });
    const read = await readAll(source);
    expect(read.error).toMatchObject({ code: 'TWG_IPC_STREAM_RESUME_REFUSED' });
    expect(seen[0]).toMatchObject({ 'thalweg-resume-next': '7', 'thalweg-stream': 's-2' });
  });
});

describe('IpcStreamSource: losses and bad bytes are loud', () => {
  it('a non-resumable drop before EOS fails naming the rows received and the last offset', async () => {
    const bytes = ipcRows(0, 20, 5, 4, false);
    const producer = await tcpProducer((s) =>
      s.end(bytes.subarray(0, Math.floor(bytes.byteLength * 0.7))),
    );
    cleanup.push(producer.close);
    const source = new IpcStreamSource({
      connection: { kind: 'tcp', host: '127.0.0.1', port: producer.port },
      topic: 'live',
    });
    const read = await readAll(source);
    expect(read.error).toBeInstanceOf(IpcStreamSourceError);
    expect(read.error).toMatchObject({ code: 'TWG_IPC_STREAM_DROPPED' });
    const last = read.ids.length - 1;
    expect(read.ids).toEqual(range(0, read.ids.length));
    expect(String(read.error)).toContain(
      `after ${read.ids.length} rows; the last row taken is offset ${last}`,
    );
  });

  it('refuses malformed bytes with their stream byte and batch; rows before are kept', async () => {
    const good = ipcRows(0, 15, 5);
    // Where the second batch's message starts, by the reader itself.
    const scan = new IpcStreamDecoder({ maxMessageBytes: 1 << 20 });
    scan.push(good);
    scan.next();
    scan.next();
    const second = scan.offset;
    const bad = Buffer.from(good);
    bad.fill(0x5a, second + 8, second + 40);
    const source = new IpcStreamSource({
      connection: { kind: 'readable', readable: Readable.from([bad]) },
      topic: 'live',
    });
    const read = await readAll(source);
    expect(read.error).toMatchObject({ code: 'TWG_IPC_STREAM_INVALID' });
    const error = read.error as IpcStreamSourceError;
    // message-bounds reports where in the metadata it went wrong, at or after the message start.
    expect(error.position).toBeGreaterThanOrEqual(second);
    expect(error.batch).toBe(1);
    expect(read.ids).toEqual(range(0, 5));
    expect(String(error)).toMatch(/record batch \d+, stream byte \d+/);
  });
});

describe('IpcStreamSource: backpressure', () => {
  it('a paused partition is not read: the producer write blocks; resumed, every row arrives', async () => {
    const bytes = ipcRows(0, 20_000, 500, 1000);
    let wrote: boolean | undefined;
    const producer = await tcpProducer((s) => {
      wrote = s.write(bytes);
      s.end();
    });
    cleanup.push(producer.close);
    const source = new IpcStreamSource({
      connection: { kind: 'tcp', host: '127.0.0.1', port: producer.port },
      topic: 'live',
      prefetchBatches: 2,
    });
    source.pause([p]);
    const done = readAll(source);
    await waitFor(() => wrote !== undefined, 'the producer to write');
    expect(wrote).toBe(false);
    await waitFor(
      () => (producer.sockets[0]?.writableLength ?? 0) > 0,
      'bytes held at the producer',
    );
    expect(source.stats().bytes).toBe(0);
    source.resume([p]);
    const read = await done;
    expect(read.error).toBeUndefined();
    expect(read.ids.length).toBe(20_000);
  });

  it('a full prefetch queue stops socket reads: memory stays bounded', async () => {
    const bytes = ipcRows(0, 20_000, 500, 1000);
    const producer = await tcpProducer((s) => s.end(bytes));
    cleanup.push(producer.close);
    const source = new IpcStreamSource({
      connection: { kind: 'tcp', host: '127.0.0.1', port: producer.port },
      topic: 'live',
      prefetchBatches: 2,
    });
    const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    await it.next();
    await waitFor(() => source.prefetchFill() === 1, 'the prefetch queue to fill');
    await waitFor(
      () => (producer.sockets[0]?.writableLength ?? 0) > 0,
      'bytes held at the producer',
    );
    expect(source.stats().bytes).toBeLessThan(bytes.byteLength / 2);
    expect(source.stats().maxQueuedBytes).toBeLessThan(8 * 1024 * 1024);
    await source.close();
  });
});

describe('IpcStreamSource: cursors and options', () => {
  it('numbers a non-resumable stream from the sought offset, and cursorAt gives log-offset cursors', async () => {
    const source = new IpcStreamSource({
      connection: { kind: 'readable', readable: Readable.from([ipcRows(0, 3, 3)]) },
      topic: 'live',
    });
    source.seek(p, { kind: 'log-offset', nextOffset: 100 });
    expect(() => source.seek(p, { kind: 'stream-token', token: 'x', nextOffset: 1 })).toThrow(
      /log-offset cursor/,
    );
    const read = await readAll(source);
    expect(read.offsets).toEqual([100, 101, 102]);
    expect(source.cursorAt(p, 103)).toEqual({ kind: 'log-offset', nextOffset: 103 });
    expect(() => source.seek(p, { kind: 'log-offset', nextOffset: 0 })).toThrow(
      /seek after batches/,
    );
    expect(() => source.cursorAt({ topic: 'other', partition: 0 }, 1)).toThrow(/not this source's/);
  });

  it('refuses resume for a Readable, naming the field', async () => {
    expect(() =>
      ipcStream({
        connection: { kind: 'readable', readable: process.stdin },
        topic: 't',
        resume: true,
      }),
    ).toThrow(/ipcStreamSource\.resume/);
    expect(() =>
      ipcStream({ connection: { kind: 'tcp', host: 'h', port: 0 }, topic: 't' }),
    ).toThrow(/ipcStreamSource\.connection\.port/);
    const server = createServer();
    await listen(server);
    server.close();
    await once(server, 'close');
  });
});
