import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import { kafkaSource, platformaticConsumer, platformaticSupported } from '../../src/index.js';
import { platformaticConsumerWith } from '../../src/platformatic-port.js';
import type { PlatformaticModule } from '../../src/platformatic-load.js';
import { assignedSource, BatchCollector, KafkaFixture, quiet } from '../helpers.js';
import { describeKafkaContracts } from './kafka-contracts.js';

/** What retention does to a lagging reader: every record before `before` is deleted. */
async function deleteBefore(topic: string, before: number): Promise<void> {
  // kafkajs 2.2.4's deleteTopicRecords fails against this broker ("Error while deleting records").
  const { Admin } = await import('@platformatic/kafka');
  const admin = new Admin({ clientId: 'twg-delete-records', bootstrapBrokers: kafkaBrokers() });
  try {
    await admin.deleteRecords({
      topics: [{ name: topic, partitions: [{ partition: 0, offset: BigInt(before) }] }],
    });
  } finally {
    await admin.close();
  }
}

/** The real client module, with a Consumer whose first `left` calls of `method` fail. */
async function flakyClient(
  failing: { left: number },
  method: 'fetch' | 'listOffsets' = 'fetch',
): Promise<PlatformaticModule> {
  const real = await import('@platformatic/kafka');
  class Flaky extends real.Consumer {
    constructor(
      options: ConstructorParameters<typeof real.Consumer<Buffer, Buffer, Buffer, Buffer>>[0],
    ) {
      super(options);
      const call = this[method].bind(this) as (options: unknown) => Promise<unknown>;
      Object.assign(this, {
        [method]: (options: unknown) => {
          if (failing.left <= 0) return call(options);
          failing.left -= 1;
          return Promise.reject(new Error('injected: the connection was reset'));
        },
      });
    }
  }
  return { ...real, Consumer: Flaky } as unknown as PlatformaticModule;
}

// CI runs every test on Node 20 and on Node 24. @platformatic/kafka needs
// Node 22+, so on Node 24 it passes the contract and the tests below, and on
// Node 20 the source refuses it by name: each runtime runs one of the two.
if (platformaticSupported()) {
  describeKafkaContracts('@platformatic/kafka', platformaticConsumer);
  describe('platformaticConsumer against Kafka', () => {
    const fx = new KafkaFixture();
    beforeAll(() => fx.start());
    afterAll(() => fx.stop());

    it('ends the source naming what is gone when its position lies before the log start', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 10);
      await deleteBefore(topic, 6);
      const p0 = { topic, partition: 0 };
      const source = assignedSource({ partitions: [p0], kafka: platformaticConsumer });
      source.seek(p0, { kind: 'log-offset', nextOffset: 2 });
      const c = new BatchCollector(source);
      await expect(c.until(() => false, 20_000)).rejects.toThrow(
        `TWG_KAFKA_POSITION_LOST: ${topic}/0: position 2 is outside the log (start 6, end 10)`,
      );
      expect(c.batches).toEqual([]);
      await source.close();
    });

    it('starts at the log start when nothing was sought and records were deleted', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 10);
      await deleteBefore(topic, 6);
      const source = assignedSource({
        partitions: [{ topic, partition: 0 }],
        kafka: platformaticConsumer,
      });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 4);
      expect(c.values()).toEqual(['v6', 'v7', 'v8', 'v9']);
      await source.close();
    });

    it('fetches again after a failed fetch, losing and repeating nothing', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 20);
      const failing = { left: 3 };
      const source = assignedSource({
        partitions: [{ topic, partition: 0 }],
        kafka: platformaticConsumerWith(() => flakyClient(failing)),
      });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 20);
      expect(c.values()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
      expect(failing.left).toBe(0);
      await source.close();
    });

    it('positions its partitions again when listing their offsets fails', async () => {
      const topic = await fx.topic(2);
      await fx.sendNumbered(topic, 2, 0, 10);
      const failing = { left: 2 };
      const source = assignedSource({
        partitions: [
          { topic, partition: 0 },
          { topic, partition: 1 },
        ],
        kafka: platformaticConsumerWith(() => flakyClient(failing, 'listOffsets')),
      });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 10);
      expect(c.values().sort()).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`).sort());
      expect(failing.left).toBe(0);
      await source.close();
    });

    it('ends the source after five failed fetch rounds in a row, naming the cause', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 5);
      const source = assignedSource({
        partitions: [{ topic, partition: 0 }],
        kafka: platformaticConsumerWith(() => flakyClient({ left: Infinity })),
      });
      const c = new BatchCollector(source);
      await expect(c.until(() => false, 20_000)).rejects.toThrow(
        'TWG_KAFKA_CONSUMER_FAILED: the Kafka consumer failed and will not restart: ' +
          'injected: the connection was reset',
      );
      expect(c.batches).toEqual([]);
      await source.close();
    });
  });
} else {
  describe('@platformatic/kafka on Node 20', () => {
    it('is refused when the source starts, naming the runtime and what to use', async () => {
      const source = kafkaSource({
        mode: 'group',
        brokers: kafkaBrokers(),
        cluster: 'test-cluster',
        topics: ['twg-any'],
        groupId: uniqueName('twg-node20'),
        kafka: platformaticConsumer,
        log: quiet,
      });
      const read = async () => {
        for await (const _ of source.batches(new AbortController().signal)) return;
      };
      await expect(read()).rejects.toThrow(
        /TWG_KAFKA_CLIENT_UNSUPPORTED.*Node 22\.22\+ or 24\.6\+ and this is Node 20\./,
      );
      await source.close();
    });
  });
}
