import { describe, expect, it } from 'vitest';
import { kafkaSource } from '../src/index.js';
import { FakeConsumer, fakeAssignedSource } from './fake-consumer.js';
import { BatchCollector, quiet } from './helpers.js';

// logEnd() of both modes: each owned partition's high watermark as its last
// fetch reported it, read off the fetches the client made anyway.

const P = (partition: number) => ({ topic: 't', partition });
const ends = (source: {
  logEnd(): readonly { partition: { partition: number }; next: number }[];
}) => Object.fromEntries(source.logEnd().map((e) => [e.partition.partition, e.next]));

function group() {
  const { factory, consumer } = FakeConsumer.factory();
  const source = kafkaSource({
    mode: 'group',
    brokers: ['127.0.0.1:9092'],
    cluster: 'c',
    topics: ['t'],
    groupId: 'g',
    log: quiet,
    kafka: factory,
  });
  return { source, consumer, collector: new BatchCollector(source) };
}

describe('Kafka source logEnd', () => {
  it('group mode: the latest high watermark per owned partition, dropped once revoked', async () => {
    const s = group();
    expect(s.source.logEnd()).toEqual([]);
    await s.collector.yieldable();
    s.consumer.join([P(0), P(1)]);
    // Nothing fetched yet: no log end is guessed.
    expect(s.source.logEnd()).toEqual([]);
    s.consumer.deliver(P(0), 0, 3, { highWatermark: '10' });
    s.consumer.deliver(P(1), 0, 2);
    expect(s.source.logEnd()).toEqual([
      { partition: P(0), next: 10 },
      { partition: P(1), next: 2 },
    ]);
    s.consumer.deliver(P(0), 3, 3, { highWatermark: '12' });
    expect(ends(s.source)).toEqual({ 0: 12, 1: 2 });
    // A fetch wholly below what was queued yields nothing, yet says where the log ends.
    s.consumer.deliver(P(0), 0, 3, { highWatermark: '13' });
    expect(ends(s.source)).toEqual({ 0: 13, 1: 2 });
    // So does a fetch of filtered records only.
    s.consumer.emit({
      kind: 'filtered-batch',
      batch: {
        topic: 't',
        partition: 1,
        firstOffset: '2',
        lastOffset: '3',
        highWatermark: '4',
        kind: 'messages',
        messages: [],
      },
    });
    expect(ends(s.source)).toEqual({ 0: 13, 1: 4 });
    // A value no offset can have leaves the last one standing, and the read goes on.
    s.consumer.deliver(P(0), 6, 1, { highWatermark: '9007199254740993' });
    s.consumer.deliver(P(0), 7, 1, { highWatermark: '-1' });
    expect(ends(s.source)).toEqual({ 0: 13, 1: 4 });
    await s.collector.until((c) => c.batches.length >= 4);

    s.consumer.join([P(1)]);
    expect(ends(s.source)).toEqual({ 1: 4 });
    // A late fetch of the revoked partition is stale: not this member's log end.
    s.consumer.deliver(P(0), 8, 1, { highWatermark: '20' });
    expect(ends(s.source)).toEqual({ 1: 4 });
    await s.source.close();
  });

  it('assigned mode: the latest high watermark of each configured partition', async () => {
    const s = fakeAssignedSource();
    await s.collector.yieldable();
    s.consumer.join([P(0), P(2)]);
    s.consumer.deliver(P(2), 0, 5, { highWatermark: '7' });
    expect(s.source.logEnd()).toEqual([{ partition: P(2), next: 7 }]);
    s.consumer.deliver(P(0), 0, 2);
    s.consumer.deliver(P(2), 5, 2);
    expect(ends(s.source)).toEqual({ 0: 2, 2: 7 });
    await s.collector.until((c) => c.batches.length >= 3);
    await s.source.close();
  });
});
