import { sourcePartition, type Scheduler, type SourceBatch } from '@thalweg/connector-core';
import { flight, uniqueName } from '@thalweg/test-services';
import type { RecordBatch } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { flightClient } from '../src/flight-client.js';
import { FlightSource } from '../src/flight-source.js';
import { action, pyarrowReadBack, readBackOf } from './flight-peer.js';

const client = flightClient(flight().url);
afterAll(() => client.close());

/** Runs each backoff wait at once, recording it: reconnects need no real time. */
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

async function drain(s: FlightSource): Promise<SourceBatch[]> {
  const out: SourceBatch[] = [];
  for await (const b of s.batches(new AbortController().signal)) out.push(b);
  return out;
}

/** Each record's offset, checked against the generated row's id and payload. */
function offsets(batches: readonly SourceBatch[]): number[] {
  return batches.flatMap((b) =>
    b.records.map((r) => {
      const row = JSON.parse(Buffer.from(r.value).toString()) as { id: unknown; payload: unknown };
      expect([Number(row.id), row.payload]).toEqual([r.offset, `row-${r.offset}`]);
      return r.offset;
    }),
  );
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('one live stream read by our Flight client and by pyarrow’s', () => {
  it('gives both the same rows, whole and resumed from a row', async () => {
    const stream = uniqueName('twg-live-both');
    await action(client, 'generate', { stream, rows: 250, batch_rows: 40 });
    for (const ticket of [{ stream }, { stream, from: 90 }]) {
      const ours: RecordBatch[] = [];
      for await (const got of client.doGet(new TextEncoder().encode(JSON.stringify(ticket)))) {
        ours.push(got.batch);
      }
      const theirs = await pyarrowReadBack(ticket);
      expect(readBackOf(ours)).toEqual(theirs);
      // Resumed at the batch boundary at or below 90: rows 80..249.
      expect(theirs.rows).toBe('from' in ticket ? 170 : 250);
    }
    await action(client, 'drop', { stream });
  });
});

describe('FlightSource against pyarrow', () => {
  it('reads a generated live stream resumable from a stored cursor, exactly from it', async () => {
    const stream = uniqueName('twg-live');
    await action(client, 'generate', { stream, rows: 100, batch_rows: 10 });
    const s = new FlightSource({ url: client, stream, resumable: true });
    s.seek(sourcePartition(stream, 0), { kind: 'stream-token', token: stream, nextOffset: 25 });
    const batches = await drain(s);
    expect(offsets(batches)).toEqual(range(25, 100));
    // The server restarted at row 20, the batch boundary below 25: 5 duplicates dropped.
    expect(s.stats().duplicatesDropped).toBe(5);
    await action(client, 'drop', { stream });
  });

  it('resumes a stream the server drops (fail_after_batches) with nothing lost or repeated', async () => {
    const stream = uniqueName('twg-live-drop');
    await action(client, 'generate', {
      stream,
      rows: 95,
      batch_rows: 10,
      fail_after_batches: 3,
    });
    const scheduler = instantScheduler();
    const s = new FlightSource({ url: client, stream, resumable: true, scheduler });
    expect(offsets(await drain(s))).toEqual(range(0, 95));
    expect(s.stats().reconnects).toBe(1);
    expect(scheduler.delays).toHaveLength(1);
    await action(client, 'drop', { stream });
  });

  it('a non-resumable stream dropped by the server fails, naming the last row taken', async () => {
    const stream = uniqueName('twg-live-plain');
    await action(client, 'generate', {
      stream,
      rows: 50,
      batch_rows: 10,
      resumable: false,
      fail_after_batches: 2,
    });
    const s = new FlightSource({ url: client, stream });
    await expect(drain(s)).rejects.toThrow(/the last row taken is offset 19/);
    await action(client, 'drop', { stream });
  });
});
