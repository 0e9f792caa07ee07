import { describe, expect, it } from 'vitest';
import { offsetSpan, partitionKey } from '../../src/offset-span.js';
import { BatchQueue, type QueuedBatch } from '../../src/source-support/batch-queue.js';

const entry = (partition: number, start: number, bytes = 10): QueuedBatch => {
  const p = { topic: 't', partition };
  return {
    key: partitionKey(p),
    partition: p,
    batch: { span: offsetSpan('t', partition, start, start + 1), records: [] },
    bytes,
  };
};

describe('BatchQueue', () => {
  it('is over its bounds at either limit and drained at half', () => {
    const q = new BatchQueue(4, 100);
    q.push(entry(0, 0));
    q.push(entry(0, 1));
    q.push(entry(0, 2));
    expect([q.overBounds, q.drained]).toEqual([false, false]);
    q.push(entry(1, 0));
    expect(q.overBounds).toBe(true);
    q.take(() => false);
    q.take(() => false);
    expect([q.overBounds, q.drained, q.size, q.bytes]).toEqual([false, true, 2, 20]);
    const byBytes = new BatchQueue(100, 100);
    byBytes.push(entry(0, 0, 100));
    expect(byBytes.overBounds).toBe(true);
  });

  it('fills by the fuller of its bounds, leaving out the partitions held back', () => {
    const q = new BatchQueue(4, 100);
    expect(q.fillExcept(() => false)).toBe(0);
    q.push(entry(0, 0, 10));
    q.push(entry(1, 0, 60));
    expect(q.fillExcept(() => false)).toBe(0.7);
    expect(q.fillExcept((k) => k === partitionKey({ topic: 't', partition: 1 }))).toBe(0.25);
    q.push(entry(1, 1, 60));
    expect(q.fillExcept(() => false)).toBe(1);
  });

  it('takes in order within a partition and skips partitions held back', () => {
    const q = new BatchQueue(10, 1000);
    [entry(0, 0), entry(1, 0), entry(0, 1), entry(1, 1)].forEach((e) => q.push(e));
    const held = partitionKey({ topic: 't', partition: 0 });
    expect(q.take((k) => k === held)?.batch.span).toMatchObject({ partition: 1, start: 0 });
    expect(q.take((k) => k === held)?.batch.span).toMatchObject({ partition: 1, start: 1 });
    expect(q.take((k) => k === held)).toBeUndefined();
    expect(q.take(() => false)?.batch.span).toMatchObject({ partition: 0, start: 0 });
  });

  it('purges whole partitions and keeps the byte count right', () => {
    const q = new BatchQueue(10, 1000);
    [entry(0, 0, 5), entry(1, 0, 7), entry(0, 1, 5)].forEach((e) => q.push(e));
    expect(q.purge(new Set([partitionKey({ topic: 't', partition: 0 })]))).toBe(2);
    expect([q.size, q.bytes]).toEqual([1, 7]);
  });
});
