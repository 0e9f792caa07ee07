import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '@thalweg/test-services';
import type { SourceBatch } from '@thalweg/connector-core';
import { CLIENTS } from './clients.js';
import { BatchCollector, groupSource, KafkaFixture, text } from './helpers.js';

const fx = new KafkaFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const recordsOf = (batches: readonly SourceBatch[], partition: number) =>
  batches.filter((b) => b.span.partition === partition).flatMap((b) => b.records);

describe.each(CLIENTS)('KafkaGroupSource flow control over $name', ({ factory }) => {
  it('a partition paused by the pipeline yields nothing new while the others continue, then resumes', async () => {
    const topic = await fx.topic(3);
    await fx.sendNumbered(topic, 3, 0, 30);
    const source = groupSource(topic, uniqueName('twg-pause'), { kafka: factory });
    const c = new BatchCollector(source);
    await c.until((x) => x.records() >= 30);

    const p0 = { topic, partition: 0 };
    source.pause([p0]);
    const pausedAt = c.batches.length;
    for (let i = 0; i < 6; i++) await fx.sendNumbered(topic, 3, 30 + i * 3, 3);
    // Partitions 1 and 2 deliver their 12 new records; partition 0 stays silent.
    await c.until((x) => x.batches.slice(pausedAt).flatMap((b) => b.records).length >= 12);
    // Markers, written after partition 0's new records, to the partitions
    // still read: once both are back, a fetch that ignored the pause would
    // have brought partition 0's records too (absence shown by a marker, not
    // by waiting a while).
    await fx.send(topic, [
      { partition: 1, key: 'm1', value: 'marker-1' },
      { partition: 2, key: 'm2', value: 'marker-2' },
    ]);
    await c.until((x) => {
      const seen = x.batches.slice(pausedAt).flatMap((b) => b.records.map((r) => text(r.value)));
      return seen.includes('marker-1') && seen.includes('marker-2');
    });
    const whilePaused = c.batches.slice(pausedAt);
    expect(recordsOf(whilePaused, 0)).toEqual([]);
    expect(recordsOf(whilePaused, 1).length + recordsOf(whilePaused, 2).length).toBe(14);
    expect(source.stats().pausedByPipeline).toEqual([p0]);

    source.resume([p0]);
    await c.until((x) => recordsOf(x.batches.slice(pausedAt), 0).length >= 6);
    expect(recordsOf(c.batches.slice(pausedAt), 0).map((r) => text(r.value))).toEqual([
      'v30',
      'v33',
      'v36',
      'v39',
      'v42',
      'v45',
    ]);
    expect(source.stats().pausedByPipeline).toEqual([]);
    await source.close();
  });

  it('a slow reader with a tiny queue bound makes the source pause partitions in the client, losing nothing', async () => {
    const topic = await fx.topic(3);
    // Many small record batches, one per fetch with maxBytesPerPartition 64.
    for (let i = 0; i < 30; i++) await fx.sendNumbered(topic, 3, i * 3, 3);
    const source = groupSource(topic, uniqueName('twg-bound'), {
      maxQueuedBatches: 2,
      maxBytesPerPartition: 64,
      kafka: factory,
    });
    const values: string[] = [];
    const controller = new AbortController();
    for await (const batch of source.batches(controller.signal)) {
      values.push(...batch.records.map((r) => text(r.value)));
      expect(source.stats().queuedBatches).toBeLessThanOrEqual(2 + 3);
      if (values.length >= 90) break;
      await sleep(5);
    }
    const stats = source.stats();
    expect(stats.queuePauses).toBeGreaterThan(0);
    expect(stats.queuePausedMs).toBeGreaterThan(0);
    expect(values.sort()).toEqual(Array.from({ length: 90 }, (_, i) => `v${i}`).sort());
    await source.close();
  });

  it('reports the offsets of an aborted transaction as an empty batch, so the position can pass them', async () => {
    const topic = await fx.topic(1);
    const tx = fx.kafka.producer({
      transactionalId: uniqueName('twg-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await tx.connect();
    const t = await tx.transaction();
    await t.send({ topic, messages: [{ value: 'aborted-1' }, { value: 'aborted-2' }] });
    await t.abort();
    await tx.disconnect();

    const source = groupSource(topic, uniqueName('twg-tx-group'), { kafka: factory });
    const c = new BatchCollector(source);
    await c.until((x) => x.batches.length >= 1);
    // Two aborted records and the abort marker: offsets 0..2, no record for the caller.
    expect(c.batches[0]).toEqual({
      span: { topic, partition: 0, start: 0, end: 3 },
      records: [],
    });
    expect(source.stats().emptyBatches).toBe(1);

    await fx.send(topic, [{ value: 'after' }]);
    await c.until((x) => x.records() >= 1);
    expect(c.batches[1]?.span).toEqual({ topic, partition: 0, start: 3, end: 4 });
    expect(c.values()).toEqual(['after']);
    await source.close();
  });
});
