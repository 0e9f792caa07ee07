import { ReadMeter, type ConsumeMeasure } from '@thalweg/test-services';
import { Kafka, logLevel } from 'kafkajs';

export interface BareConsumerOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  /** Stops once this many records were read. */
  readonly records: number;
  /** A fresh group each call, so every run reads the topic from the beginning. */
  readonly groupId: string;
  readonly maxBytes?: number;
  readonly maxBytesPerPartition?: number;
}

/**
 * The baseline any kafkajs-based reader is measured against: a bare kafkajs
 * consumer in its own group, `eachBatch` with manual commits off and
 * auto-resolve on (the settings the Kafka source uses), doing nothing but
 * count records and value bytes. Nothing is queued, converted or yielded, so
 * the difference to a real reader is that reader's own cost. Written to be
 * copied by other benches (the pipeline's kafka end-to-end bench).
 */
export async function measureBareConsumer(options: BareConsumerOptions): Promise<ConsumeMeasure> {
  const kafka = new Kafka({
    clientId: 'thalweg-bench-bare',
    brokers: [...options.brokers],
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({
    groupId: options.groupId,
    allowAutoTopicCreation: false,
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    ...(options.maxBytesPerPartition === undefined
      ? {}
      : { maxBytesPerPartition: options.maxBytesPerPartition }),
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [options.topic], fromBeginning: true });
  const meter = new ReadMeter();
  const finished = new Promise<number>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      eachBatch: async ({ batch }) => {
        let bytes = 0;
        for (const m of batch.messages) bytes += m.value?.byteLength ?? 0;
        meter.took(batch.messages.length, bytes);
        if (meter.records >= options.records) resolve(performance.now());
      },
    });
  });
  const endedAt = await finished;
  await consumer.disconnect();
  return meter.measure(endedAt);
}
