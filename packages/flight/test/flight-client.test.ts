import { createServer } from 'node:net';
import {
  Server,
  ServerCredentials,
  status,
  type ServerDuplexStream,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { flightClient, type FlightClient } from '../src/flight-client.js';
import { batchFlightData, schemaFlightData } from '../src/flight-data-framing.js';
import { encodeFlightData, type FlightDescriptor } from '../src/flight-messages.js';
import {
  flightServer,
  type FlightServer,
  type FlightServerHandlers,
} from '../src/flight-server.js';
import { flightServiceDefinition } from '../src/flight-service.js';
import {
  ROWS_SCHEMA,
  collectUntilFailure,
  deferred,
  rowsBatch,
  rowsOf,
  text,
  utf8,
  type Row,
} from './fixtures.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(
  handlers: FlightServerHandlers,
): Promise<{ server: FlightServer; client: FlightClient }> {
  const server = await flightServer(handlers);
  cleanups.push(() => server.close());
  const client = flightClient(server.url);
  cleanups.push(() => client.close());
  return { server, client };
}

const batches: Row[][] = [
  [
    { id: 0n, payload: 'zero', ts: 1_764_633_600_000 },
    { id: 1n, payload: null, ts: null },
  ],
  [{ id: 2n ** 62n, payload: 'größer', ts: -1 }],
  [
    { id: -5n, payload: '', ts: 0 },
    { id: 6n, payload: 'six', ts: 6 },
    { id: 7n, payload: null, ts: 7 },
  ],
];
/**
 * Whether `p` is still unsettled once every callback already due has run:
 * a write that can go resolves within the microtasks and I/O callbacks
 * before the next check phase (setImmediate); a held one waits for 'drain'.
 */
async function isPending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return !settled;
}

/** The next item of `items` as text; fails when the iteration has ended. */
async function nextText(items: AsyncIterator<Uint8Array>): Promise<string | null> {
  const next = await items.next();
  if (next.done === true) throw new Error('the results ended early');
  return text(next.value);
}

const DATASET: FlightDescriptor = { type: 'path', path: ['orders'] };

describe('DoGet', () => {
  it('hands on each batch with its app_metadata, decoded by the checked reader', async () => {
    const tickets: string[] = [];
    const { client } = await serve({
      doGet: (ticket) => {
        tickets.push(text(ticket) ?? '');
        return {
          schema: ROWS_SCHEMA,
          batches: batches.map((rows, i) => ({
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
      { rows: batches[0], meta: '{"offset":0}' },
      { rows: batches[1], meta: '{"offset":1}' },
      { rows: batches[2], meta: null },
    ]);
  });

  it('rejects when the server fails mid-stream, after the batches it sent, naming the ticket', async () => {
    const { client } = await serve({
      doGet: () => ({
        schema: ROWS_SCHEMA,
        batches: (async function* () {
          yield { batch: rowsBatch(batches[0] ?? []) };
          yield { batch: rowsBatch(batches[1] ?? []) };
          throw new Error('disk gone');
        })(),
      }),
    });
    const { items, error } = await collectUntilFailure(client.doGet(utf8('t-1')));
    expect(items.map((i) => rowsOf(i.batch))).toEqual([batches[0], batches[1]]);
    expect(error).toMatchObject({ code: 'TWG_FLIGHT_CALL_FAILED', grpcCode: status.INTERNAL });
    expect(error.message).toMatch(
      /DoGet ticket "t-1": the server at grpc:\/\/127\.0\.0\.1:\d+ ended the call with INTERNAL: disk gone/,
    );
  });

  it('refuses a malformed data_header from the server, naming the message index', async () => {
    // A server of our own making that sends a good schema, a good batch, then a torn header.
    const server = new Server();
    server.addService(flightServiceDefinition(['DoGet']), {
      DoGet: (call: ServerWritableStream<Uint8Array, Uint8Array>) => {
        const first = schemaFlightData(ROWS_SCHEMA);
        const good = batchFlightData(
          rowsBatch(batches[0] ?? []),
          first.dataHeader,
          new Uint8Array(0),
        );
        call.write(encodeFlightData(first));
        call.write(encodeFlightData(good));
        call.write(encodeFlightData({ ...good, dataHeader: good.dataHeader.subarray(0, 12) }));
        call.end();
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    cleanups.push(() => server.forceShutdown());
    const client = flightClient(`grpc+tcp://127.0.0.1:${port}`);
    cleanups.push(() => client.close());
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
    const { client } = await serve({
      doGet: (_ticket, signal) => ({
        schema: ROWS_SCHEMA,
        batches: (async function* () {
          yield { batch: rowsBatch(batches[0] ?? []) };
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

  it('stops the call when the consumer leaves the loop early', async () => {
    const serverSawCancel = deferred<undefined>();
    const { client } = await serve({
      doGet: (_ticket, signal) => {
        signal.addEventListener('abort', () => serverSawCancel.resolve(undefined));
        return {
          schema: ROWS_SCHEMA,
          batches: (async function* () {
            for (;;) {
              yield { batch: rowsBatch(batches[0] ?? []) };
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

describe('DoPut', () => {
  it('hands on PutResults as the server writes them, late and out of order', async () => {
    const acks = [deferred<undefined>(), deferred<undefined>(), deferred<undefined>()];
    const received: { seq: number; meta: string | null; rows: Row[]; path: readonly string[] }[] =
      [];
    const allReceived = deferred<undefined>();
    const { client } = await serve({
      doPut: async (put) => {
        received.push({
          seq: put.seq,
          meta: text(put.appMetadata),
          rows: rowsOf(put.batch),
          path: put.descriptor.type === 'path' ? put.descriptor.path : [],
        });
        if (received.length === 3) allReceived.resolve(undefined);
        await acks[put.seq - 1]?.promise;
        return utf8(JSON.stringify({ seq: put.seq }));
      },
    });
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    for (const [i, rows] of batches.entries()) {
      await put.write(rowsBatch(rows), utf8(JSON.stringify({ seq: i + 1 })));
    }
    put.end();
    await allReceived.promise;
    expect(received).toEqual(
      batches.map((rows, i) => ({ seq: i + 1, meta: `{"seq":${i + 1}}`, rows, path: ['orders'] })),
    );
    const results = put.results[Symbol.asyncIterator]();
    // Nothing is durable yet; then the server acknowledges 2, 3, 1 in that order.
    acks[1]?.resolve(undefined);
    expect(await nextText(results)).toBe('{"seq":2}');
    acks[2]?.resolve(undefined);
    expect(await nextText(results)).toBe('{"seq":3}');
    acks[0]?.resolve(undefined);
    expect(await nextText(results)).toBe('{"seq":1}');
    expect((await results.next()).done).toBe(true);
    await put.done;
  });

  it('surfaces a failed acknowledgement on results, done and every later write', async () => {
    const { client } = await serve({
      doPut: (put) =>
        put.seq === 2
          ? Promise.reject(new Error('fsync failed'))
          : Promise.resolve(utf8(`${put.seq}`)),
    });
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    await put.write(rowsBatch(batches[0] ?? []));
    await put.write(rowsBatch(batches[1] ?? []));
    const { items, error } = await collectUntilFailure(put.results);
    expect(items.map(text)).toEqual(['1']);
    expect(error).toMatchObject({
      code: 'TWG_FLIGHT_CALL_FAILED',
      grpcCode: status.INTERNAL,
      call: 'DoPut path orders',
    });
    expect(error.message).toMatch(/fsync failed/);
    await expect(put.done).rejects.toBe(error);
    await expect(put.write(rowsBatch(batches[2] ?? []))).rejects.toBe(error);
  });

  it('holds a write while the server does not read, and lets it go when it reads again', async () => {
    // A server of our own that stops reading DoPut until the test lets it.
    const reading = deferred<undefined>();
    const received = deferred<number>();
    const server = new Server();
    server.addService(flightServiceDefinition(['DoPut']), {
      DoPut: (call: ServerDuplexStream<Uint8Array, Uint8Array>) => {
        call.pause();
        let count = 0;
        void reading.promise.then(() => {
          call.on('data', () => (count += 1));
          call.on('end', () => {
            received.resolve(count);
            call.end();
          });
          call.resume();
        });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    cleanups.push(() => server.forceShutdown());
    const client = flightClient(`grpc://127.0.0.1:${port}`);
    cleanups.push(() => client.close());
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    const big = rowsBatch(
      Array.from({ length: 5_000 }, (_, i) => ({ id: BigInt(i), payload: 'x'.repeat(40), ts: i })),
    );
    let held: Promise<void> | undefined;
    let writes = 0;
    // Bounded: HTTP/2 windows and the stream's buffer hold a few MiB at most.
    while (held === undefined && writes < 1_000) {
      const write = put.write(big);
      writes += 1;
      if (await isPending(write)) held = write;
      else await write;
    }
    expect(held).toBeDefined();
    expect(writes).toBeGreaterThan(1); // the first writes went straight through
    expect(await isPending(held ?? Promise.resolve())).toBe(true); // and this one stays held
    reading.resolve(undefined);
    await held;
    put.end();
    expect(await received.promise).toBe(writes + 1); // the schema message, then every batch
  });

  it('is cancelled by its signal: writes and results fail with TWG_FLIGHT_CANCELLED', async () => {
    const { client } = await serve({ doPut: () => new Promise(() => undefined) });
    const abort = new AbortController();
    const put = client.doPut(DATASET, ROWS_SCHEMA, abort.signal);
    await put.write(rowsBatch(batches[0] ?? []));
    abort.abort(new Error('stop'));
    const { error } = await collectUntilFailure(put.results);
    expect(error).toMatchObject({ code: 'TWG_FLIGHT_CANCELLED', call: 'DoPut path orders' });
    await expect(put.write(rowsBatch(batches[0] ?? []))).rejects.toBe(error);
  });

  it('refuses a write after end and a batch of another schema', async () => {
    const { client } = await serve({ doPut: () => Promise.resolve(null) });
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    const other = client.doPut(DATASET, rowsBatch(batches[0] ?? []).schema.select(['id']));
    await expect(other.write(rowsBatch(batches[0] ?? []))).rejects.toMatchObject({
      code: 'TWG_FLIGHT_MISUSE',
    });
    other.end();
    put.end();
    await expect(put.write(rowsBatch(batches[0] ?? []))).rejects.toMatchObject({
      code: 'TWG_FLIGHT_MISUSE',
    });
    await put.done;
    await other.done;
  });
});

describe('DoAction, ListFlights', () => {
  it('returns the Result bodies of an action in order', async () => {
    const { client } = await serve({
      doAction: (type, body) => [utf8(`${type}:1`), body, utf8(`${type}:3`)],
    });
    const got = [];
    for await (const r of client.doAction('configure', utf8('{"dataset":"d"}'))) got.push(text(r));
    expect(got).toEqual(['configure:1', '{"dataset":"d"}', 'configure:3']);
  });

  it('lists flights with their descriptors and counts', async () => {
    const { client } = await serve({
      listFlights: () => [
        {
          schema: new Uint8Array(0),
          descriptor: DATASET,
          endpoints: [],
          totalRecords: 6,
          totalBytes: -1,
        },
      ],
    });
    const infos = [];
    for await (const info of client.listFlights()) infos.push(info);
    expect(infos).toEqual([
      {
        schema: new Uint8Array(0),
        descriptor: DATASET,
        endpoints: [],
        totalRecords: 6,
        totalBytes: -1,
      },
    ]);
  });

  it('reports a method the server does not serve as UNIMPLEMENTED', async () => {
    const { client } = await serve({});
    const { error } = await collectUntilFailure(client.doAction('drop', new Uint8Array(0)));
    expect(error).toMatchObject({
      code: 'TWG_FLIGHT_CALL_FAILED',
      grpcCode: status.UNIMPLEMENTED,
      errorClass: 'fatal-config',
    });
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
    const client = flightClient(url);
    cleanups.push(() => client.close());
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
