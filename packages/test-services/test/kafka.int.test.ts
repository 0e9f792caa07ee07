import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { kafkaBrokers, uniqueName } from '../src/index.js';

describe('Kafka service', () => {
  const kafka = new Kafka({
    clientId: 'thalweg-service-probe',
    brokers: kafkaBrokers(),
    logLevel: logLevel.ERROR,
  });
  const topic = uniqueName('twg-probe');
  const groupId = uniqueName('twg-probe-group');
  const count = 50;
  let admin: Admin;

  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  });

  afterAll(async () => {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });

  it('round-trips records and commits the consumer-group offset by hand', async () => {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic,
      messages: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
    });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId, retry: { retries: 2 } });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) seen.push(m.value?.toString() ?? '');
            if (seen.length >= count) {
              // The committed offset is the NEXT offset to read.
              const next = (BigInt(batch.lastOffset()) + 1n).toString();
              await consumer.commitOffsets([{ topic, partition: batch.partition, offset: next }]);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await done;
    await consumer.disconnect();

    expect(seen).toEqual(Array.from({ length: count }, (_, i) => `v${i}`));
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(offsets[0]?.partitions).toEqual([
      expect.objectContaining({ partition: 0, offset: String(count) }),
    ]);
  });
});
