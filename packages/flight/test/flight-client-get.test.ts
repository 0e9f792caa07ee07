import { createServer } from 'node:net';
import { status, type ServerWritableStream } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { flightClient } from '../src/flight-client.js';
import { batchFlightData, schemaFlightData } from '../src/flight-data-framing.js';
import { encodeFlightData } from '../src/flight-messages.js';
import {
  ROWS_SCHEMA,
  collectUntilFailure,
  deferred,
  rowsBatch,
  rowsOf,
  text,
  utf8,
} from './fixtures.js';
import { BATCHES, flightHarness } from './flight-harness.js';

const { serve, serveRaw, connect } = flightHarness();

describe('DoGet', () => {
  it('hands on each batch with its app_metadata, decoded by the checked reader', async () => {
    const tickets: string[] = [];
    const client = await serve({
      doGet: (ticket) => {
        tickets.push(text(ticket) ?? '');
        return {
          schema: ROWS_SCHEMA,
          batches: BATCHES.map((rows, i) => ({
            batch: rowsBatch(rows),
            // the last batch carries none: it arrives as null
            appMetadata: i === 2 ? null : utf8(JSON.stringify({ offset: i })),
          })),
        };
      },
    });
    const got = [];
    for await (const item of client.doGet(utf8('{"stream":"s"}'))) {
      got.push({ rows: rowsOf(item.batch), meta: text(item.appMetadata) });
    }
    expect(tickets).toEqual(['{"stream":"s"}']);
    expect(got).toEqual([
      { rows: BATCHES[0], meta: '{"offset":0}' },
      { rows: BATCHES[1], meta: '{"offset":1}' },
      { rows: BATCHES[2], meta: null },
    ]);
  });

  it('rejects when the server fails mid-stream, after the BATCHES it sent, naming the ticket', async () => {
    const client = await serve({
      doGet: () => ({
        schema: ROWS_SCHEMA,
        batches: (async function* () {
          yield { batch: rowsBatch(BATCHES[0] ?? []) };
          yield { batch: rowsBatch(BATCHES[1] ?? []) };
          throw new Error('disk gone');
        })(),
      }),
    });
    const { items, error } = await collectUntilFailure(client.doGet(utf8('t-1')));
    expect(items.map((i) => rowsOf(i.batch))).toEqual([BATCHES[0], BATCHES[1]]);
    expect(error).toMatchObject({ code: 'TWG_FLIGHT_CALL_FAILED', grpcCode: status.INTERNAL });
    expect(error.message).toMatch(
      /DoGet ticket "t-1": the server at grpc:\/\/127\.0\.0\.1:\d+ ended the call with INTERNAL: disk gone/,
    );
  });

  it('refuses a malformed data_header from the server, naming the message index', async () => {
    // A server of our own making that sends a good schema, a good batch, then a torn header.
    const client = await serveRaw(['DoGet'], {
      DoGet: (call: ServerWritableStream<Uint8Array, Uint8Array>) => {
        const first = schemaFlightData(ROWS_SCHEMA);
        const good = batchFlightData(
          rowsBatch(BATCHES[0] ?? []),
          first.dataHeader,
          new Uint8Array(0),
        );
        call.write(encodeFlightData(first));
        call.write(encodeFlightData(good));
        call.write(encodeFlightData({ ...good, dataHeader: good.dataHeader.subarray(0, 12) }));
        call.end();
      },
    });
    const { items, error } = await collectUntilFailure(client.doGet(utf8('torn')));
    expect(items).toHaveLength(1);
    expect(error).toMatchObject({
      code: 'TWG_FLIGHT_DATA_INVALID',
      messageIndex: 2,
      call: 'DoGet ticket "torn"',
    });
    expect(error.message).toMatch(/DoGet ticket "torn", message 2, byte \d+: /);
  });

  it('is cancelled by its signal: the iterator rejects and the server sees the cancellation', async () => {
    const serverSawCancel = deferred<undefined>();
    const client = await serve({
      doGet: (_ticket, signal) => ({
        schema: ROWS_SCHEMA,
        batches: (async function* () {
          yield { batch: rowsBatch(BATCHES[0] ?? []) };
          // Nothing more until the client goes away.
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          serverSawCancel.resolve(undefined);
        })(),
      }),
    });
    const abort = new AbortController();
    const iterator = client.doGet(utf8('live'), abort.signal)[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    const pending = iterator.next();
    abort.abort(new Error('shutting down'));
    await expect(pending).rejects.toMatchObject({
      code: 'TWG_FLIGHT_CANCELLED',
      call: 'DoGet ticket "live"',
    });
    await serverSawCancel.promise;
  });

  it('releases a server blocked on flow control when the client cancels', async () => {
    const serverFinished = deferred<undefined>();
    const big = rowsBatch(
      Array.from({ length: 5_000 }, (_, i) => ({ id: BigInt(i), payload: 'y'.repeat(40), ts: i })),
    );
    const client = await serve({
      doGet: () => ({
        schema: ROWS_SCHEMA,
        batches: (async function* () {
          try {
            for (;;) yield { batch: big };
          } finally {
            serverFinished.resolve(undefined);
          }
        })(),
      }),
    });
    const abort = new AbortController();
    const iterator = client.doGet(utf8('firehose'), abort.signal)[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    // The client reads no more: the server's writes fill the window and wait for 'drain'.
    abort.abort(new Error('enough'));
    await expect(iterator.next()).rejects.toMatchObject({ code: 'TWG_FLIGHT_CANCELLED' });
    await serverFinished.promise;
  });

  it('stops the call when the consumer leaves the loop early', async () => {
    const serverSawCancel = deferred<undefined>();
    const client = await serve({
      doGet: (_ticket, signal) => {
        signal.addEventListener('abort', () => serverSawCancel.resolve(undefined));
        return {
          schema: ROWS_SCHEMA,
          batches: (async function* () {
            for (;;) {
              yield { batch: rowsBatch(BATCHES[0] ?? []) };
              if (signal.aborted) return;
            }
          })(),
        };
      },
    });
    for await (const item of client.doGet(utf8('endless'))) {
      expect(item.batch.numRows).toBe(2);
      break;
    }
    await serverSawCancel.promise;
  });
});

describe('connecting', () => {
  it('names the URL when the server is unreachable', async () => {
    // A port that was free a moment ago: bound, then released.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const address = probe.address();
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const url = `grpc://127.0.0.1:${port}`;
    const client = connect(url);
    const { error } = await collectUntilFailure(client.doGet(utf8('t')));
    expect(error).toMatchObject({ code: 'TWG_FLIGHT_UNREACHABLE', errorClass: 'transient' });
    expect(error.message).toContain(`the Flight server at ${url} is unreachable`);
  });

  it('refuses URLs that are not grpc:// or grpc+tcp:// with a host and a port', () => {
    for (const url of ['http://h:1', 'grpc+tls://h:1', 'grpc://h', 'not a url']) {
      expect(() => flightClient(url)).toThrow(
        expect.objectContaining({ code: 'TWG_FLIGHT_URL_INVALID' }),
      );
    }
  });
});
