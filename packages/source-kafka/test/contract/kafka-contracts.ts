import { afterAll, beforeAll } from 'vitest';
import {
  describeSourceContract,
  type SourceFeatures,
  type WrittenRecord,
} from '@thalweg/contracts';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import { kafkaSource, type ConsumerFactory } from '../../src/index.js';
import { assignedSource, groupSource, KafkaFixture, quiet } from '../helpers.js';
import { produceExact } from './exact-producer.js';
import { describePositionLost } from './position-lost-contract.js';

const FEATURES: SourceFeatures = {
  partitions: 2,
  keys: true,
  headers: true,
  // kafkajs's producer cannot send a header without a value; reading one
  // is tested from crafted wire bytes (kafkajs-headers.test.ts).
  nullHeaderValues: false,
  tombstones: true,
  cursors: 'any-offset',
  offsets: 'dense',
};

/** A fresh topic of two partitions holding `written`; offsets start at 0. */
async function seedTopic(kafka: KafkaFixture, written: readonly (readonly WrittenRecord[])[]) {
  const topic = await kafka.topic(written.length, 'twg-contract');
  for (const [p, records] of written.entries())
    await produceExact(kafka.producer, topic, p, records);
  const logs = written.map((records, p) => ({
    partition: { topic, partition: p },
    records: records.map((r, offset) => ({ ...r, offset })),
  }));
  return { topic, logs };
}

/**
 * The source contract, in both modes, and what a position outside the log
 * does, over one Kafka client: every client behind `ConsumerPort` passes
 * the same suite.
 */
export function describeKafkaContracts(client: string, factory: ConsumerFactory): void {
  const kafka = new KafkaFixture();
  beforeAll(() => kafka.start());
  afterAll(() => kafka.stop());

  describeSourceContract(`KafkaGroupSource over ${client} (consumer group, broker-managed)`, {
    features: FEATURES,
    timeoutMs: 60_000,
    seed: async (written) => {
      const { topic, logs } = await seedTopic(kafka, written);
      // Every source of the fixture joins this group: the second resumes from the first's commits.
      const groupId = uniqueName('twg-contract-group');
      return { logs, open: async () => groupSource(topic, groupId, { kafka: factory }) };
    },
    badInput: async () => ({
      run: async () =>
        kafkaSource({
          mode: 'group',
          brokers: kafkaBrokers(),
          cluster: 'test-cluster',
          topics: [],
          groupId: uniqueName('twg-contract-group'),
          log: quiet,
        }),
      names: ['topics'],
    }),
  });

  describeSourceContract(`KafkaAssignedSource over ${client} (manual assignment, store-managed)`, {
    features: FEATURES,
    timeoutMs: 60_000,
    seed: async (written) => {
      const { logs } = await seedTopic(kafka, written);
      return {
        logs,
        open: async () =>
          assignedSource({ partitions: logs.map((l) => l.partition), kafka: factory }),
      };
    },
    badInput: async () => ({
      run: async () =>
        kafkaSource({
          mode: 'assigned',
          brokers: kafkaBrokers(),
          cluster: 'test-cluster',
          partitions: [{ topic: 'twg-contract', partition: -1 }],
          log: quiet,
        }),
      names: ['partitions'],
    }),
  });
  describePositionLost(client, factory, kafka);
}
