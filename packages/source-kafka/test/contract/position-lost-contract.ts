import { describe, expect, it } from 'vitest';
import { platformaticSupported, type ConsumerFactory } from '../../src/index.js';
import { assignedSource, BatchCollector, deleteBefore, type KafkaFixture } from '../helpers.js';

/**
 * A position outside the partition's log, over one Kafka client: every
 * client ends the source with TWG_KAFKA_POSITION_LOST and delivers nothing,
 * where kafkajs alone would skip to the log start in silence.
 */
export function describePositionLost(
  client: string,
  factory: ConsumerFactory,
  fx: KafkaFixture,
): void {
  describe(`a position outside the log, over ${client}`, () => {
    it('past the log end: ends the source saying the log is not the one the position was taken in', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 10);
      const p0 = { topic, partition: 0 };
      const source = assignedSource({ partitions: [p0], kafka: factory });
      // A cursor stored before the topic was deleted and created again.
      source.seek(p0, { kind: 'log-offset', nextOffset: 50 });
      const c = new BatchCollector(source);
      await expect(c.until(() => false, 20_000)).rejects.toThrow(
        `TWG_KAFKA_POSITION_LOST: ${topic}/0: position 50 is outside the log (start 0, end 10); ` +
          'the log ends before it',
      );
      expect(c.batches).toEqual([]);
      await source.close();
    });

    // Deleting records takes @platformatic/kafka's admin (helpers.ts), which
    // needs Node 22+: these run on Node 24 only.
    if (!platformaticSupported()) return;

    it('before the log start: ends the source naming what is gone', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 10);
      await deleteBefore(topic, 6);
      const p0 = { topic, partition: 0 };
      const lines: string[] = [];
      const source = assignedSource({
        partitions: [p0],
        kafka: factory,
        log: (line) => lines.push(line),
      });
      source.seek(p0, { kind: 'log-offset', nextOffset: 2 });
      const c = new BatchCollector(source);
      await expect(c.until(() => false, 20_000)).rejects.toThrow(
        `TWG_KAFKA_POSITION_LOST: ${topic}/0: position 2 is outside the log (start 6, end 10)`,
      );
      // Nothing from the log start (where kafkajs resets a lost position to) was delivered.
      expect(c.batches).toEqual([]);
      // kafkajs's own ERROR line was watched, not logged: the source's logLevel is `nothing`.
      expect(lines.filter((l) => l.startsWith('kafkajs'))).toEqual([]);
      await source.close();
    });

    it('starts at the log start when nothing was sought and records were deleted', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 10);
      await deleteBefore(topic, 6);
      const source = assignedSource({ partitions: [{ topic, partition: 0 }], kafka: factory });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 4);
      expect(c.values()).toEqual(['v6', 'v7', 'v8', 'v9']);
      await source.close();
    });
  });
}
