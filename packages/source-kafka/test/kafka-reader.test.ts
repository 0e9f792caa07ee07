import type { SourceBatch } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { KafkaReader } from '../src/kafka-reader.js';
import { consumerSettings, parseKafkaSourceOptions } from '../src/options.js';
import type { AssignmentChange } from '../src/reader-hooks.js';
import { FakeConsumer, tick } from './fake-consumer.js';
import { quiet } from './helpers.js';

// The reader both modes share, driven directly: the scripted client plays
// the group and the broker, the test pulls batches one at a time.

const P = (partition: number) => ({ topic: 't', partition });

function setup(queue: { maxQueuedBatches?: number } = {}) {
  const { factory, consumer } = FakeConsumer.factory();
  const settings = parseKafkaSourceOptions({
    mode: 'group',
    brokers: ['127.0.0.1:9092'],
    cluster: 'c',
    topics: ['t'],
    groupId: 'g',
    log: quiet,
    kafka: factory,
    ...queue,
  });
  const joins: AssignmentChange[] = [];
  const ended: (Error | null)[] = [];
  const reader = new KafkaReader(
    settings,
    consumerSettings(settings, 'g', { kind: 'group', topics: ['t'] }),
    { joined: (change) => joins.push(change), ended: (error) => ended.push(error) },
  );
  const abort = new AbortController();
  const batches = reader.batches(abort.signal);
  return { reader, consumer, joins, ended, abort, batches };
}

/**
 * Starts the reader: its first pull connects and runs the client, then
 * waits for a batch. Returned in an object: an async function returning the
 * pull itself would wait for it.
 */
async function started(
  s: ReturnType<typeof setup>,
): Promise<{ readonly first: Promise<IteratorResult<SourceBatch>> }> {
  const first = s.batches.next();
  for (let i = 0; i < 100 && !s.consumer.running; i++) await tick();
  expect(s.consumer.calls).toEqual(['connect', 'subscribe', 'run']);
  return { first };
}

const span = (b: IteratorResult<SourceBatch>) =>
  b.done === true ? 'done' : `${b.value.span.partition}[${b.value.span.start},${b.value.span.end})`;

describe('KafkaReader', { timeout: 2000 }, () => {
  it('yields queued batches in order, and nothing while a rejoin runs', async () => {
    const s = setup();
    const { first } = await started(s);
    s.consumer.join([P(0)]);
    s.consumer.deliver(P(0), 0, 3);
    expect(span(await first)).toBe('0[0,3)');
    s.consumer.deliver(P(0), 3, 2);
    s.consumer.emit({ kind: 'rebalancing' });
    const held = s.batches.next();
    let settled = false;
    void held.then(() => (settled = true));
    await tick();
    // Queued, but its partition may be about to be revoked: held back.
    expect(settled).toBe(false);
    expect(s.reader.stats().queuedBatches).toBe(1);
    s.consumer.join([P(0)]);
    expect(span(await held)).toBe('0[3,5)');
    s.abort.abort();
  });

  it('purges a revoked partition before the join hook runs, and drops its late batches', async () => {
    const s = setup();
    const { first } = await started(s);
    s.consumer.join([P(0), P(1)]);
    s.consumer.deliver(P(1), 0, 2);
    s.consumer.deliver(P(0), 0, 2);
    s.consumer.deliver(P(1), 2, 2);
    expect(span(await first)).toBe('1[0,2)');
    s.consumer.join([P(0)]);
    expect(s.joins.at(-1)).toEqual({ assignment: [P(0)], revoked: [P(1)], assigned: [] });
    expect(s.reader.stats().purgedBatches).toBe(1);
    // The client still delivers one for the partition it no longer holds.
    s.consumer.deliver(P(1), 4, 2);
    expect(s.reader.stats().staleBatches).toBe(1);
    expect(span(await s.batches.next())).toBe('0[0,2)');
    expect(s.reader.yieldedEnd(P(1))).toBeUndefined();
    expect(s.reader.yieldedEnd(P(0))).toBe(2);
    s.abort.abort();
  });

  it('seeks a kept partition back to its floor after a join and drops what arrives below it', async () => {
    const s = setup();
    const { first } = await started(s);
    s.consumer.join([P(0)]);
    s.consumer.deliver(P(0), 0, 5);
    expect(span(await first)).toBe('0[0,5)');
    s.consumer.take();
    // kafkajs restarts from the committed offset (0) after a join.
    s.consumer.join([P(0), P(1)]);
    expect(s.consumer.take()).toContain('seek t/0 5');
    s.consumer.deliver(P(0), 0, 7);
    expect(span(await s.batches.next())).toBe('0[5,7)');
    expect(s.reader.stats().skippedRecords).toBe(5);
    s.consumer.deliver(P(0), 0, 3);
    expect(s.reader.stats().skippedRecords).toBe(8);
    expect(s.reader.stats().queuedBatches).toBe(0);
    s.abort.abort();
  });

  it('pauses a partition once the queue reaches its bound, and resumes it at half', async () => {
    const s = setup({ maxQueuedBatches: 4 });
    const { first } = await started(s);
    s.consumer.join([P(0)]);
    s.consumer.take();
    for (let at = 0; at < 3; at++) s.consumer.deliver(P(0), at, 1);
    expect(s.consumer.take()).toEqual([]);
    s.consumer.deliver(P(0), 3, 1);
    expect(s.consumer.take()).toEqual(['pause t/0']);
    expect(s.reader.stats().queuePauses).toBe(1);
    expect(span(await first)).toBe('0[0,1)');
    // Three left: still above half the bound.
    expect(s.consumer.take()).toEqual([]);
    expect(span(await s.batches.next())).toBe('0[1,2)');
    expect(s.consumer.take()).toEqual(['resume t/0']);
    s.abort.abort();
  });

  it("the pipeline's pause and the queue's are one state: neither resume restarts what the other holds", async () => {
    const s = setup({ maxQueuedBatches: 1 });
    const { first } = await started(s);
    s.consumer.join([P(0)]);
    s.consumer.deliver(P(0), 0, 1);
    expect(span(await first)).toBe('0[0,1)');
    s.consumer.deliver(P(0), 1, 1);
    s.consumer.deliver(P(0), 2, 1);
    s.consumer.take();
    s.reader.pause([P(0)]);
    // Already paused by the queue: the client is not told again.
    expect(s.consumer.take()).toEqual([]);
    const next = s.batches.next();
    let settled = false;
    void next.then(() => (settled = true));
    await tick();
    // The pipeline paused it: its queued batches wait too.
    expect(settled).toBe(false);
    s.reader.resume([P(0)]);
    expect(s.consumer.take()).toEqual([]);
    expect(span(await next)).toBe('0[1,2)');
    expect(span(await s.batches.next())).toBe('0[2,3)');
    expect(s.consumer.take()).toEqual(['resume t/0']);
    s.abort.abort();
  });

  it('a crash that will not restart ends batches() with it and stops fetching', async () => {
    const s = setup();
    const { first } = await started(s);
    s.consumer.join([P(0)]);
    s.consumer.take();
    s.consumer.emit({ kind: 'crashed', restart: false, error: new Error('broker gone') });
    await expect(first).rejects.toThrow(/TWG_KAFKA_CONSUMER_FAILED.*broker gone/);
    expect(s.ended).toHaveLength(1);
    expect(s.consumer.take()).toEqual(['pause t/0']);
  });

  it('refuses a second iteration while the first runs', async () => {
    const s = setup();
    const { first } = await started(s);
    await expect(s.reader.batches(s.abort.signal).next()).rejects.toThrow(/TWG_KAFKA_MISUSE/);
    s.abort.abort();
    expect((await first).done).toBe(true);
  });
});
