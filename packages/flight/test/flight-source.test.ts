import {
  sourcePartition,
  type Scheduler,
  type SourceBatch,
  type SourceCursor,
} from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import type { FlightClient } from '../src/flight-client.js';
import type { FlightBatchOut } from '../src/flight-server.js';
import { FlightSource } from '../src/flight-source.js';
import type { FlightSourceOptions } from '../src/flight-source-options.js';
import { ROWS_SCHEMA, rowsBatch, text, utf8 } from './fixtures.js';
import { flightHarness, isPending } from './flight-harness.js';

const { serve } = flightHarness();
const BATCH_ROWS = 4;
const PARTITION = sourcePartition('s', 0);

/** A scheduler that runs each wait at once and records its delay. */
function instantScheduler(): Scheduler & { readonly delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    every: () => () => undefined,
    after: (ms, work) => {
      delays.push(ms);
      queueMicrotask(() => void work());
      return () => undefined;
    },
  };
}

/**
 * A live stream of `rows` generated rows in batches of BATCH_ROWS, served as
 * our pyarrow peer does: resumable from the boundary at or below `from`,
 * each batch labelled `{"offset"}`; `failAfter` aborts the first read after
 * that many batches. Records every ticket.
 */
async function liveStream(
  rows: number,
  options: {
    resumable: boolean;
    failAfter?: number;
    onBatch?: (first: number) => Promise<void>;
    /** Characters each row's payload is padded to (default: just `p<id>`). */
    payloadChars?: number;
  },
): Promise<{ client: FlightClient; tickets: string[]; sent: number[] }> {
  const tickets: string[] = [];
  const sent: number[] = [];
  let failAfter = options.failAfter;
  const client = await serve({
    doGet: (ticket) => {
      tickets.push(text(ticket) ?? '');
      const spec = JSON.parse(text(ticket) ?? '{}') as { from?: number };
      const from = options.resumable ? (spec.from ?? 0) : 0;
      const start = from - (from % BATCH_ROWS);
      const fail = failAfter;
      failAfter = undefined;
      async function* batches(): AsyncGenerator<FlightBatchOut> {
        let count = 0;
        for (let first = start; first < rows; first += BATCH_ROWS) {
          if (fail !== undefined && count >= fail) throw new Error('injected drop');
          await options.onBatch?.(first);
          const n = Math.min(BATCH_ROWS, rows - first);
          const batch = rowsBatch(
            Array.from({ length: n }, (_, i) => ({
              id: BigInt(first + i),
              payload: `p${first + i}`.padEnd(options.payloadChars ?? 0, '.'),
              ts: first + i,
            })),
          );
          sent.push(first);
          count++;
          yield {
            batch,
            appMetadata: options.resumable ? utf8(JSON.stringify({ offset: first })) : null,
          };
        }
      }
      return { schema: ROWS_SCHEMA, batches: batches() };
    },
  });
  return { client, tickets, sent };
}

function source(client: FlightClient, extra: Partial<FlightSourceOptions> = {}): FlightSource {
  return new FlightSource({
    url: client,
    stream: 's',
    scheduler: instantScheduler(),
    maxBatchRecords: 3,
    ...extra,
  });
}

async function drain(s: FlightSource): Promise<SourceBatch[]> {
  const out: SourceBatch[] = [];
  for await (const b of s.batches(new AbortController().signal)) out.push(b);
  return out;
}

const ids = (batches: SourceBatch[]) =>
  batches.flatMap((b) =>
    b.records.map((r) => {
      const row = JSON.parse(Buffer.from(r.value).toString()) as { id: string | number };
      expect(Number(row.id)).toBe(r.offset);
      return r.offset;
    }),
  );

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('FlightSource', () => {
  it('reads a resumable stream from a stored cursor exactly, dropping the rows below it', async () => {
    const { client, tickets } = await liveStream(10, { resumable: true });
    const s = source(client, { resumable: true });
    const cursor: SourceCursor = { kind: 'stream-token', token: 's', nextOffset: 6 };
    s.seek(PARTITION, cursor);
    const batches = await drain(s);
    expect(tickets).toEqual(['{"stream":"s","from":6}']);
    expect(ids(batches)).toEqual(range(6, 10));
    // Rows 4 and 5 came again (the server restarts at the batch boundary 4).
    expect(s.stats().duplicatesDropped).toBe(2);
    expect(batches.map((b) => [b.span.start, b.span.end])).toEqual([
      [6, 8],
      [8, 10],
    ]);
    expect(s.origin).toEqual({ kind: 'non-replayable', resumable: true });
    expect(s.cursorAt(PARTITION, 10)).toEqual({ kind: 'stream-token', token: 's', nextOffset: 10 });
  });

  it('resumes a dropped resumable stream from the row after the last one queued', async () => {
    const { client, tickets } = await liveStream(20, { resumable: true, failAfter: 2 });
    const scheduler = instantScheduler();
    const s = source(client, { resumable: true, scheduler });
    const batches = await drain(s);
    expect(ids(batches)).toEqual(range(0, 20));
    expect(tickets).toEqual(['{"stream":"s","from":0}', '{"stream":"s","from":8}']);
    expect(s.stats().reconnects).toBe(1);
    expect(scheduler.delays).toHaveLength(1);
  });

  it('counts a non-resumable stream itself, from its log-offset cursor, and fails on a drop', async () => {
    const { client, tickets } = await liveStream(12, { resumable: false, failAfter: 2 });
    const s = source(client);
    s.seek(PARTITION, { kind: 'log-offset', nextOffset: 100 });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const b of s.batches(new AbortController().signal)) {
          for (const r of b.records) seen.push(r.offset);
        }
      })(),
    ).rejects.toMatchObject({ code: 'TWG_FLIGHT_STREAM_DROPPED' });
    expect(tickets).toEqual(['{"stream":"s"}']);
    expect(seen).toEqual(range(100, 108));
    expect(s.cursorAt(PARTITION, 108)).toEqual({ kind: 'log-offset', nextOffset: 108 });
  });

  it('refuses a resume that would skip rows, and a cursor of the wrong kind', async () => {
    const client = await serve({
      doGet: () => ({
        schema: ROWS_SCHEMA,
        batches: [
          {
            batch: rowsBatch([{ id: 8n, payload: 'x', ts: 0 }]),
            appMetadata: utf8('{"offset":8}'),
          },
        ],
      }),
    });
    const s = source(client, { resumable: true });
    expect(() => s.seek(PARTITION, { kind: 'log-offset', nextOffset: 0 })).toThrow(
      /stream-token cursor/,
    );
    s.seek(PARTITION, { kind: 'stream-token', token: 's', nextOffset: 4 });
    await expect(drain(s)).rejects.toThrow(/rows 4\.\.7 are lost/);
  });

  it('stops pulling the DoGet while paused, and while its prefetch queue is full', async () => {
    const served: number[] = [];
    // 4,000 batches of 64 KiB: far more than the socket and HTTP/2 buffers
    // hold, so a server held by flow control is held well short of the end.
    const { client } = await liveStream(16_000, {
      resumable: true,
      payloadChars: 16 * 1024,
      onBatch: (first) => {
        served.push(first);
        return Promise.resolve();
      },
    });
    const s = source(client, { resumable: true, prefetchBatches: 2 });
    s.pause([PARTITION]);
    const it = s.batches(new AbortController().signal)[Symbol.asyncIterator]();
    const first = it.next();
    // Paused from the start: the DoGet is never pulled, so the server sends nothing.
    expect(await isPending(first)).toBe(true);
    expect(s.stats().batches).toBe(0);
    expect(served).toEqual([]);
    s.resume([PARTITION]);
    expect((await first).done).toBe(false);
    // Nobody takes batches now: the source reads up to its prefetch bound,
    // and gRPC's flow control holds the server far short of the stream's end.
    for (let i = 0; i < 5; i++) await isPending(new Promise(() => undefined));
    expect(s.stats().rows).toBeLessThanOrEqual(4 * BATCH_ROWS);
    expect(served.length).toBeLessThan(4_000);
    await s.close();
  });
});
