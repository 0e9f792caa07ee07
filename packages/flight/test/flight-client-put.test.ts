import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
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
import { BATCHES, DATASET, flightHarness, isPending, nextText } from './flight-harness.js';

const { serve, serveRaw } = flightHarness();

describe('DoPut', () => {
  it('hands on PutResults as the server writes them, late and out of order', async () => {
    const acks = [deferred<undefined>(), deferred<undefined>(), deferred<undefined>()];
    const received: { seq: number; meta: string | null; rows: Row[]; path: readonly string[] }[] =
      [];
    const allReceived = deferred<undefined>();
    const client = await serve({
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
    for (const [i, rows] of BATCHES.entries()) {
      await put.write(rowsBatch(rows), utf8(JSON.stringify({ seq: i + 1 })));
    }
    put.end();
    await allReceived.promise;
    expect(received).toEqual(
      BATCHES.map((rows, i) => ({ seq: i + 1, meta: `{"seq":${i + 1}}`, rows, path: ['orders'] })),
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
    const client = await serve({
      doPut: (put) =>
        put.seq === 2
          ? Promise.reject(new Error('fsync failed'))
          : Promise.resolve(utf8(`${put.seq}`)),
    });
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    await put.write(rowsBatch(BATCHES[0] ?? []));
    await put.write(rowsBatch(BATCHES[1] ?? []));
    const { items, error } = await collectUntilFailure(put.results);
    expect(items.map(text)).toEqual(['1']);
    expect(error).toMatchObject({
      code: 'TWG_FLIGHT_CALL_FAILED',
      grpcCode: status.INTERNAL,
      call: 'DoPut path orders',
    });
    expect(error.message).toMatch(/fsync failed/);
    await expect(put.done).rejects.toBe(error);
    await expect(put.write(rowsBatch(BATCHES[2] ?? []))).rejects.toBe(error);
  });

  it('holds a write while the server does not read, and lets it go when it reads again', async () => {
    // A server of our own that stops reading DoPut until the test lets it.
    const reading = deferred<undefined>();
    const received = deferred<number>();
    const client = await serveRaw(['DoPut'], {
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
    const client = await serve({ doPut: () => new Promise(() => undefined) });
    const abort = new AbortController();
    const put = client.doPut(DATASET, ROWS_SCHEMA, abort.signal);
    await put.write(rowsBatch(BATCHES[0] ?? []));
    abort.abort(new Error('stop'));
    const { error } = await collectUntilFailure(put.results);
    expect(error).toMatchObject({ code: 'TWG_FLIGHT_CANCELLED', call: 'DoPut path orders' });
    await expect(put.write(rowsBatch(BATCHES[0] ?? []))).rejects.toBe(error);
  });

  it('refuses a write after end and a batch of another schema', async () => {
    const client = await serve({ doPut: () => Promise.resolve(null) });
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    const other = client.doPut(DATASET, rowsBatch(BATCHES[0] ?? []).schema.select(['id']));
    await expect(other.write(rowsBatch(BATCHES[0] ?? []))).rejects.toMatchObject({
      code: 'TWG_FLIGHT_MISUSE',
    });
    other.end();
    put.end();
    await expect(put.write(rowsBatch(BATCHES[0] ?? []))).rejects.toMatchObject({
      code: 'TWG_FLIGHT_MISUSE',
    });
    await put.done;
    await other.done;
  });
});

describe('DoAction, ListFlights', () => {
  it('returns the Result bodies of an action in order', async () => {
    const client = await serve({
      doAction: (type, body) => [utf8(`${type}:1`), body, utf8(`${type}:3`)],
    });
    const got = [];
    for await (const r of client.doAction('configure', utf8('{"dataset":"d"}'))) got.push(text(r));
    expect(got).toEqual(['configure:1', '{"dataset":"d"}', 'configure:3']);
  });

  it('lists flights with their descriptors and counts', async () => {
    const client = await serve({
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
    const client = await serve({});
    const { error } = await collectUntilFailure(client.doAction('drop', new Uint8Array(0)));
    expect(error).toMatchObject({
      code: 'TWG_FLIGHT_CALL_FAILED',
      grpcCode: status.UNIMPLEMENTED,
      errorClass: 'fatal-config',
    });
  });
});

describe('message size', () => {
  it('refuses a FlightData beyond maxMessageBytes with RESOURCE_EXHAUSTED, naming the call', async () => {
    const client = await serve({ doPut: () => Promise.resolve(null) }, { maxMessageBytes: 4096 });
    const put = client.doPut(DATASET, ROWS_SCHEMA);
    const big = rowsBatch(
      Array.from({ length: 200 }, (_, i) => ({ id: BigInt(i), payload: 'z'.repeat(40), ts: i })),
    );
    await put.write(big);
    const { error } = await collectUntilFailure(put.results);
    expect(error).toMatchObject({
      code: 'TWG_FLIGHT_CALL_FAILED',
      grpcCode: status.RESOURCE_EXHAUSTED,
      call: 'DoPut path orders',
    });
  });
});
