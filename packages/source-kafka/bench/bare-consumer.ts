import { Kafka, logLevel } from 'kafkajs';

export interface ConsumeMeasure {
  readonly records: number;
  readonly bytes: number;
  /** From `run()` to the last record: includes joining the group. */
  readonly totalMs: number;
  /** From the first batch to the last record: the steady read rate. */
  readonly steadyMs: number;
  readonly recordsPerSec: number;
}

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
  let records = 0;
  let bytes = 0;
  let firstAt = 0;
  const started = performance.now();
  const finished = new Promise<number>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      eachBatch: async ({ batch }) => {
        if (firstAt === 0) firstAt = performance.now();
        for (const m of batch.messages) bytes += m.value?.byteLength ?? 0;
        records += batch.messages.length;
        if (records >= options.records) resolve(performance.now());
      },
    });
  });
  const endedAt = await finished;
  await consumer.disconnect();
  const steadyMs = endedAt - firstAt;
  return {
    records,
    bytes,
    totalMs: endedAt - started,
    steadyMs,
    recordsPerSec: records / (steadyMs / 1000),
  };
}
