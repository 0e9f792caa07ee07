import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceCursor } from '@thalweg/connector-core';
import { KafkaSourceError } from '../src/index.js';
import { CLIENTS } from './clients.js';
import { assignedSource, BatchCollector, contiguousEnds, KafkaFixture } from './helpers.js';

const fx = new KafkaFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

describe.each(CLIENTS)('KafkaAssignedSource against Kafka over $name', ({ factory }) => {
  it('reads only the configured partitions, from a sought cursor or the beginning, and commits nothing', async () => {
    const topic = await fx.topic(3);
    await fx.sendNumbered(topic, 3, 0, 30);
    const p0 = { topic, partition: 0 };
    const p1 = { topic, partition: 1 };
    const p2 = { topic, partition: 2 };
    const source = assignedSource({ partitions: [p0, p2], kafka: factory });
    expect(source.regime).toBe('store-managed');
    expect(source.partitions()).toEqual([p0, p2]);

    const wrong = { kind: 'page', cursor: null, watermark: null, nextOffset: 3 } as SourceCursor;
    expect(() => {
      source.seek(p0, wrong);
    }).toThrow(new RegExp(`${topic}/0: a cursor of kind "page"`));
    expect(() => {
      source.seek(p1, { kind: 'log-offset', nextOffset: 1 });
    }).toThrow(KafkaSourceError);
    // A cursor in the middle of the producer's record batch: the fetch returns
    // the whole batch, and the source drops what lies before the cursor.
    source.seek(p2, source.cursorAt(p2, 4));

    const c = new BatchCollector(source);
    await c.until((x) => x.records() >= 10 + 6);
    // One marker more in every partition (v30, v31, v32 at offset 10): once
    // partitions 0 and 2 delivered theirs, a fetch of partition 1 would have
    // brought its records too (absence shown by a marker, not by waiting).
    await fx.sendNumbered(topic, 3, 30, 3);
    await c.until((x) => x.records() >= 11 + 7);
    const ends = contiguousEnds(c.batches);
    expect([...ends].sort()).toEqual([
      [0, 11],
      [2, 11],
    ]);
    // Both read to their end: each log end is what was produced into it (the
    // fetches' high watermark); partition 1, never fetched, has none.
    const logEnd = [...source.logEnd()].sort(
      (a, b) => a.partition.partition - b.partition.partition,
    );
    expect(logEnd).toEqual([
      { partition: p0, next: 11 },
      { partition: p2, next: 11 },
    ]);
    const first = (p: number) => c.batches.find((b) => b.span.partition === p)?.span.start;
    expect([first(0), first(2)]).toEqual([0, 4]);
    const offsets = (p: number) =>
      c.batches
        .filter((b) => b.span.partition === p)
        .flatMap((b) => b.records.map((r) => r.offset));
    expect(offsets(0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(offsets(2)).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(c.values().filter((v) => Number(v.slice(1)) % 3 === 1)).toEqual([]);
    expect(source.cursorAt(p2, 11)).toEqual({ kind: 'log-offset', nextOffset: 11 });
    expect(() => {
      source.seek(p0, { kind: 'log-offset', nextOffset: 0 });
    }).toThrow(/after batches\(\) started/);

    expect(source.stats().assignment).toEqual(expect.arrayContaining([p0, p2]));
    await source.close();
    // The throwaway group holds no offset at all.
    const committed = await fx.committed(source.groupId, topic);
    expect([...committed.values()]).toEqual([-1, -1, -1]);
  });

  it('refuses a configured partition the topic does not have, naming it', async () => {
    const topic = await fx.topic(2);
    const source = assignedSource({ partitions: [{ topic, partition: 5 }], kafka: factory });
    const c = new BatchCollector(source);
    await expect(c.until(() => false, 20_000)).rejects.toThrow(
      new RegExp(`TWG_KAFKA_PARTITION_UNKNOWN: partitions: ${topic}/5 do not exist`),
    );
    await source.close();
  });
});
