import { describe, expect, it } from 'vitest';
import type { SourceCursor } from '@thalweg/connector-core';
import { fakeAssignedSource } from './fake-consumer.js';

const P = (partition: number) => ({ topic: 't', partition });

describe('KafkaAssignedSource', () => {
  it('asks the client for exactly the configured partitions in a throwaway group of its own', () => {
    const a = fakeAssignedSource();
    const b = fakeAssignedSource();
    expect(a.consumer.settings?.assignment).toEqual({ kind: 'fixed', partitions: [P(0), P(2)] });
    expect(a.source.groupId).toMatch(/^ingest-assigned-[0-9a-f-]{36}$/);
    expect(a.consumer.settings?.groupId).toBe(a.source.groupId);
    expect(b.source.groupId).not.toBe(a.source.groupId);
    // A fixed assignment never changes, so the source offers no assignment listener.
    expect((a.source as { onAssignment?: unknown }).onAssignment).toBeUndefined();
  });

  it('starts a sought partition exactly at its cursor, at every join, and commits nothing', async () => {
    const s = fakeAssignedSource();
    s.source.seek(P(2), { kind: 'log-offset', nextOffset: 4 });
    await s.collector.yieldable();
    s.consumer.take();
    s.consumer.join([P(0), P(2)]);
    expect(s.consumer.take()).toEqual(['seek t/2 4']);
    s.consumer.deliver(P(2), 0, 10); // the client's fetch returned the whole record batch
    s.consumer.deliver(P(0), 0, 2);
    await s.collector.until((c) => c.batches.length >= 2);
    expect(s.collector.batches.map((b) => [b.span.partition, b.span.start, b.span.end])).toEqual([
      [2, 4, 10],
      [0, 0, 2],
    ]);
    expect(s.collector.batches[0]?.records.map((r) => r.offset)).toEqual([4, 5, 6, 7, 8, 9]);
    // A rejoin (or a client restart) seeks every partition back to what was queued.
    s.consumer.join([P(0), P(2)]);
    expect(s.consumer.take()).toEqual(['seek t/0 2', 'seek t/2 10']);
    expect(s.consumer.commits).toEqual([]);
    await s.source.close();
  });

  it('refuses cursors of another kind, malformed cursors and partitions it does not read, naming them', () => {
    const { source } = fakeAssignedSource();
    const file: SourceCursor = {
      kind: 'file-set',
      files: ['a'],
      file: 'a',
      position: 0,
      nextOffset: 0,
    };
    expect(() => {
      source.seek(P(0), file);
    }).toThrow(
      /TWG_KAFKA_CURSOR_INVALID: t\/0: a cursor of kind "file-set" cannot position a Kafka partition/,
    );
    const broken = { kind: 'log-offset', nextOffset: '12' } as unknown as SourceCursor;
    expect(() => {
      source.seek(P(2), broken);
    }).toThrow(/t\/2: cursor nextOffset 12 is not a non-negative safe integer/);
    expect(() => {
      source.seek(P(1), { kind: 'log-offset', nextOffset: 0 });
    }).toThrow(/TWG_KAFKA_PARTITION_UNKNOWN: t\/1 is not one of the configured partitions/);
    expect(() => source.cursorAt(P(1), 3)).toThrow(/t\/1 is not one of the configured/);
    expect(() => source.cursorAt(P(0), -3)).toThrow(/next: -3/);
    expect(source.cursorAt(P(0), 3)).toEqual({ kind: 'log-offset', nextOffset: 3 });
  });

  it('ends the source when the group hands it anything but its partitions', async () => {
    const s = fakeAssignedSource();
    await s.collector.yieldable();
    s.consumer.join([P(0)]);
    await expect(s.collector.until(() => false)).rejects.toThrow(
      /TWG_KAFKA_ASSIGNMENT_MISMATCH: the throwaway group .* assigned \[t\/0\] instead of \[t\/0, t\/2\]/,
    );
    await s.source.close();
  });
});
