import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '@thalweg/test-services';
import type { DroppedCommit } from '../src/index.js';
import { BatchCollector, contiguousEnds, groupSource, KafkaFixture, text } from './helpers.js';

const fx = new KafkaFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

describe('KafkaGroupSource against Kafka', () => {
  it('yields every record with exact offsets, keys, headers and tombstones, and resumes from commits', async () => {
    const topic = await fx.topic(3);
    const groupId = uniqueName('twg-group');
    const n = 60;
    await fx.send(
      topic,
      Array.from({ length: n }, (_, i) => ({
        partition: i % 3,
        key: i % 5 === 0 ? null : `k${i}`,
        value: i === 7 ? null : `v${i}`,
        headers:
          i === 4
            ? { repeated: ['x', 'y', 'z'], bin: Buffer.from([0, 255]) }
            : { seq: String(i), bin: Buffer.from([i]) },
      })),
    );

    const first = groupSource(topic, groupId);
    const a = new BatchCollector(first);
    await a.until((c) => c.records() >= n);
    const ends = contiguousEnds(a.batches);
    expect([...ends].sort()).toEqual([
      [0, 20],
      [1, 20],
      [2, 20],
    ]);
    for (const b of a.batches) {
      // Records sit inside their span, one per offset (no transactions here).
      expect(b.records.map((r) => r.offset)).toEqual(
        Array.from({ length: b.span.end - b.span.start }, (_, k) => b.span.start + k),
      );
    }
    const byValue = new Map(
      a.batches.flatMap((b) => b.records.map((r) => [text(r.value), { r, p: b.span.partition }])),
    );
    for (let i = 0; i < n; i++) {
      if (i === 7) continue;
      const hit = byValue.get(`v${i}`);
      expect(hit?.p).toBe(i % 3);
      expect(hit?.r.offset).toBe(Math.floor(i / 3));
      const key = hit?.r.key;
      expect(key === null || key === undefined ? null : text(key)).toBe(
        i % 5 === 0 ? null : `k${i}`,
      );
      expect(hit?.r.timestamp).toBeGreaterThan(1_600_000_000_000);
      if (i !== 4) {
        expect(hit?.r.headers.map(([h, v]) => [h, [...(v ?? [])]])).toEqual([
          ['seq', [...Buffer.from(String(i))]],
          ['bin', [i]],
        ]);
      }
    }
    // Repeated headers come as they were sent: kafkajs's producer writes an
    // array value as one header per element, in order.
    expect(byValue.get('v4')?.r.headers.map(([h, v]) => [h, text(v ?? new Uint8Array())])).toEqual([
      ['repeated', 'x'],
      ['repeated', 'y'],
      ['repeated', 'z'],
      ['bin', Buffer.from([0, 255]).toString()],
    ]);
    const tombstone = a.batches.flatMap((b) => b.records).filter((r) => r.tombstone === true);
    expect(tombstone).toHaveLength(1);
    expect(tombstone[0]?.value.byteLength).toBe(0);
    expect(text(tombstone[0]?.key ?? new Uint8Array())).toBe('k7');

    for (const [partition, end] of ends) {
      expect(await first.tryCommit({ topic, partition }, end)).toEqual({ kind: 'committed' });
    }
    expect(await fx.committed(groupId, topic)).toEqual(
      new Map([
        [0, 20],
        [1, 20],
        [2, 20],
      ]),
    );
    expect(first.stats()).toMatchObject({ commits: 3, records: n });
    await first.close();

    // A new member of the same group starts exactly at the committed offsets.
    await fx.sendNumbered(topic, 3, 1000, 30);
    const second = groupSource(topic, groupId);
    const b = new BatchCollector(second);
    await b.until((c) => c.records() >= 30);
    const starts = new Map<number, number>();
    for (const batch of b.batches)
      if (!starts.has(batch.span.partition)) starts.set(batch.span.partition, batch.span.start);
    expect([...starts].sort()).toEqual([
      [0, 20],
      [1, 20],
      [2, 20],
    ]);
    expect(b.values().sort()).toEqual(Array.from({ length: 30 }, (_, k) => `v${1000 + k}`).sort());
    await second.close();
  });

  it('never sends a commit for a partition it does not own, nor one lower than it already committed', async () => {
    const topic = await fx.topic(3);
    const other = await fx.topic(1);
    const groupId = uniqueName('twg-group');
    await fx.sendNumbered(topic, 3, 0, 30);
    const dropped: DroppedCommit[] = [];
    const source = groupSource(topic, groupId, { onDroppedCommit: (d) => dropped.push(d) });

    // Before the first join this member owns nothing.
    expect(await source.tryCommit({ topic, partition: 0 }, 1)).toMatchObject({
      kind: 'dropped',
      reason: 'not-owned',
    });
    const c = new BatchCollector(source);
    await c.until((x) => x.records() >= 30);

    expect(await source.tryCommit({ topic: other, partition: 0 }, 5)).toMatchObject({
      kind: 'dropped',
      reason: 'not-owned',
    });
    expect(await source.tryCommit({ topic, partition: 1 }, 10)).toEqual({ kind: 'committed' });
    expect(await source.tryCommit({ topic, partition: 1 }, 4)).toMatchObject({
      kind: 'dropped',
      reason: 'behind',
    });
    // The plain interface method resolves for a dropped commit too: never a retryable failure.
    await expect(source.commit({ topic, partition: 1 }, 3)).resolves.toBeUndefined();
    expect(await source.tryCommit({ topic, partition: 1 }, 10)).toEqual({ kind: 'committed' });

    expect(await fx.committed(groupId, topic)).toEqual(
      new Map([
        [0, -1],
        [1, 10],
        [2, -1],
      ]),
    );
    expect(await fx.committed(groupId, other)).toEqual(new Map([[0, -1]]));
    expect(source.stats().droppedCommits).toEqual({
      'not-owned': 2,
      'ownership-changed': 0,
      'not-running': 0,
      behind: 2,
      closed: 0,
    });
    expect(dropped.map((d) => [d.partition.topic === other, d.reason, d.next])).toEqual([
      [false, 'not-owned', 1],
      [true, 'not-owned', 5],
      [false, 'behind', 4],
      [false, 'behind', 3],
    ]);
    // Beyond what was read: refused, whatever the state (it would skip unread records).
    await expect(source.commit({ topic, partition: 1 }, 11)).rejects.toThrow(
      /TWG_KAFKA_COMMIT_AHEAD: .*\/1: next 11 is beyond 10/,
    );
    await source.close();
    expect(await source.tryCommit({ topic, partition: 2 }, 10)).toMatchObject({
      kind: 'dropped',
      reason: 'closed',
    });
    expect((await fx.committed(groupId, topic)).get(1)).toBe(10);
  });
});
