import { ManualClock, sourcePartition, type SourceBatch } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { MessageFeed } from '../src/message-feed.js';
import type { HeldMessage } from '../src/to-record.js';

const P = sourcePartition('persistent://public/default/t', 0);

function message(offset: number): HeldMessage {
  return {
    offset,
    messageId: `id-${String(offset)}`,
    record: { offset, key: null, value: new Uint8Array([1]), timestamp: 0, headers: [] },
    bytes: 1,
  };
}

function feed(clock: ManualClock, lingerMs: number, maxBatchMessages = 3): MessageFeed {
  return new MessageFeed(
    { maxQueuedBatches: 8, maxQueuedBytes: 1 << 20, maxBatchMessages, lingerMs, scheduler: clock },
    { beforeTake: () => undefined, yielded: () => undefined, pauseChanged: () => undefined },
  );
}

describe('MessageFeed linger', () => {
  it('holds a batch that is not full for lingerMs, gathering what arrives meanwhile', async () => {
    const clock = new ManualClock();
    const f = feed(clock, 5);
    const batches = f.batches(new AbortController().signal);
    const next = batches.next();
    f.push(P, message(10));
    // Let the iterator reach its linger; nothing is yielded before the time passes.
    await new Promise((r) => setImmediate(r));
    f.push(P, message(11));
    let yielded: SourceBatch | undefined;
    void next.then((r) => (yielded = r.value as SourceBatch));
    await new Promise((r) => setImmediate(r));
    expect(yielded).toBeUndefined();
    await clock.elapse(5);
    await next;
    expect(yielded?.records.map((r) => r.offset)).toEqual([10, 11]);
    f.close();
  });

  it('yields a full batch at once, without waiting out the linger', async () => {
    const clock = new ManualClock();
    const f = feed(clock, 1_000, 2);
    const batches = f.batches(new AbortController().signal);
    const next = batches.next();
    f.push(P, message(1));
    await new Promise((r) => setImmediate(r));
    f.push(P, message(2));
    const r = await next;
    expect((r.value as SourceBatch).records.map((x) => x.offset)).toEqual([1, 2]);
    f.close();
  });

  it('ends a linger when the feed closes', async () => {
    const clock = new ManualClock();
    const f = feed(clock, 1_000);
    const batches = f.batches(new AbortController().signal);
    const next = batches.next();
    f.push(P, message(1));
    await new Promise((r) => setImmediate(r));
    f.close();
    expect((await next).done).toBe(true);
  });
});
