import { describe, expect, it } from 'vitest';
import { StreamFeed } from '../../src/source-support/stream-feed.js';
import type { SourceBatch } from '../../src/source.js';

const partition = { topic: 't', partition: 0 };

/** A run of `n` one-byte records from `start`. */
const run = (start: number, n = 1, bytes = n) => ({
  start,
  records: Array.from({ length: n }, (_, i) => ({
    key: null,
    value: new Uint8Array([start + i]),
    headers: [],
    timestamp: 0,
    offset: start + i,
  })),
  bytes,
});

/** A pump the test ends or fails by hand. */
function handPump() {
  let end!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    end = resolve;
    fail = reject;
  });
  return { pump: () => done, end, fail };
}

function feedOf(options: { batches?: number; bytes?: number; onAbort?: 'stop' | 'wake' } = {}) {
  const stops: string[] = [];
  const feed = new StreamFeed({
    partition,
    prefetchBatches: options.batches ?? 100,
    prefetchBytes: options.bytes ?? 1000,
    stop: () => stops.push('stop'),
    onAbort: options.onAbort ?? 'wake',
  });
  return { feed, stops };
}

/** Whether `promise` settles before the macrotask after every queued microtask. */
async function settlesNow(promise: Promise<unknown>): Promise<boolean> {
  const later = new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')));
  return (await Promise.race([promise.then(() => 'settled' as const), later])) === 'settled';
}

const starts = (batches: readonly SourceBatch[]) => batches.map((b) => b.span.start);

describe('StreamFeed', () => {
  it('yields the runs in order as spans of its partition, and ends after the pump and the queue', async () => {
    const { feed } = feedOf();
    const hand = handPump();
    const it = feed.batches(new AbortController().signal, hand.pump);
    const first = it.next();
    expect(feed.started).toBe(true);
    expect(feed.push(run(0, 2))).toBe(2);
    expect(feed.push(run(2, 3))).toBe(5);
    const a = await first;
    expect(a.done === true ? undefined : a.value.span).toEqual({
      topic: 't',
      partition: 0,
      start: 0,
      end: 2,
    });
    hand.end();
    const rest: SourceBatch[] = [];
    for (let step = await it.next(); step.done !== true; step = await it.next()) {
      rest.push(step.value);
    }
    expect(starts(rest)).toEqual([2]);
    expect(rest[0]?.records.map((r) => r.offset)).toEqual([2, 3, 4]);
    expect(feed.closed).toBe(true);
    await expect(feed.batches(new AbortController().signal, hand.pump).next()).rejects.toThrow(
      'called twice',
    );
  });

  it('holds batches and the pump while the pipeline pauses the partition', async () => {
    const { feed } = feedOf();
    const it = feed.batches(new AbortController().signal, handPump().pump);
    feed.pause([{ topic: 't', partition: 1 }]);
    expect(await settlesNow(feed.readable())).toBe(true);
    feed.pause([partition]);
    feed.push(run(0));
    const next = it.next();
    expect(await settlesNow(next)).toBe(false);
    const readable = feed.readable();
    expect(await settlesNow(readable)).toBe(false);
    expect(feed.prefetchFill()).toBe(0);
    feed.resume([partition]);
    expect(starts([(await next).value as SourceBatch])).toEqual([0]);
    expect(await settlesNow(readable)).toBe(true);
    await it.return(undefined);
  });

  it('holds the pump while the queue is over its bound, until the consumer drains it to half', async () => {
    const { feed } = feedOf({ batches: 4 });
    const it = feed.batches(new AbortController().signal, handPump().pump);
    for (let i = 0; i < 4; i++) feed.push(run(i, 1, 10));
    expect(feed.prefetchFill()).toBe(1);
    expect(feed.maxQueuedBytes).toBe(40);
    const readable = feed.readable();
    expect(await settlesNow(readable)).toBe(false);
    await it.next(); // 3 left: still above half
    expect(await settlesNow(readable)).toBe(false);
    await it.next(); // 2 left: drained to half
    expect(await settlesNow(readable)).toBe(true);
    // The pipeline's pause and the queue's hold are separate: resuming one keeps the other.
    for (let i = 4; i < 6; i++) feed.push(run(i, 1, 10));
    feed.pause([partition]);
    feed.resume([partition]);
    expect(await settlesNow(feed.readable())).toBe(false);
    await it.return(undefined);
  });

  it('yields what was queued before the pump failed, then throws its error', async () => {
    const { feed } = feedOf();
    const hand = handPump();
    const it = feed.batches(new AbortController().signal, hand.pump);
    feed.push(run(0));
    feed.push(run(1));
    hand.fail(new Error('dropped'));
    expect(starts([(await it.next()).value as SourceBatch])).toEqual([0]);
    expect(starts([(await it.next()).value as SourceBatch])).toEqual([1]);
    await expect(it.next()).rejects.toThrow('dropped');
    expect(feed.closed).toBe(true);
  });

  it('ends on an abort, stopping the transport at once only when asked to', async () => {
    for (const onAbort of ['stop', 'wake'] as const) {
      const { feed, stops } = feedOf({ onAbort });
      const abort = new AbortController();
      const it = feed.batches(abort.signal, handPump().pump);
      const waiting = it.next();
      const readable = (async () => {
        feed.pause([partition]);
        await feed.readable();
      })();
      abort.abort();
      expect(stops).toEqual(onAbort === 'stop' ? ['stop'] : []);
      expect((await waiting).done).toBe(true);
      expect(feed.closed).toBe(true);
      await readable; // closing releases a pump waiting to read
      expect(stops.at(-1)).toBe('stop');
    }
  });

  it('closes from the source side: stops the transport and ends the consumer', async () => {
    const { feed, stops } = feedOf();
    const it = feed.batches(new AbortController().signal, handPump().pump);
    const waiting = it.next();
    feed.close();
    expect(stops).toEqual(['stop']);
    expect((await waiting).done).toBe(true);
  });
});
