import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import {
  platformaticConsumer,
  platformaticSupported,
  type ConsumerFactory,
} from '@thalweg/source-kafka';

/** The brokers of THALWEG_KAFKA_BROKERS; exits with a hint when it is not set. */
export function benchBrokers(bench: string): string[] {
  const brokers = (process.env['THALWEG_KAFKA_BROKERS'] ?? '').split(',').filter((b) => b !== '');
  if (brokers.length === 0) {
    process.stderr.write(
      `${bench}: THALWEG_KAFKA_BROKERS is not set; run \`eval "$(pnpm services:up)"\` first\n`,
    );
    process.exit(1);
  }
  return brokers;
}

export function benchKafka(brokers: readonly string[]): Kafka {
  return new Kafka({
    clientId: 'thalweg-bench',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
}

/**
 * A fresh topic holding `records` JSON records of `recordBytes` bytes,
 * spread round-robin over `partitions`, produced before anything reads it:
 * the deep backlog a bench consumes as fast as it can.
 */
export async function produceBacklog(
  kafka: Kafka,
  topic: string,
  records: number,
  recordBytes: number,
  partitions: number,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const pad = 'x'.repeat(recordBytes);
  // A send of at most 2 MiB: under the broker's 1 MB message bound per partition.
  const chunk = Math.min(5000, Math.floor((2 * 1024 * 1024) / recordBytes));
  const inflight: Promise<unknown>[] = [];
  for (let at = 0; at < records; at += chunk) {
    const messages = Array.from({ length: Math.min(chunk, records - at) }, (_, k) => ({
      partition: (at + k) % partitions,
      value: payload(at + k, pad, recordBytes),
    }));
    inflight.push(producer.send({ topic, messages, compression: CompressionTypes.None, acks: 1 }));
    if (inflight.length >= 4) await inflight.shift();
  }
  await Promise.all(inflight);
  await producer.disconnect();
}

/** Record `n`'s JSON value, padded to exactly `recordBytes` (valid JSON: a secondary parses it). */
function payload(n: number, pad: string, recordBytes: number): string {
  const head = `{"n":${n},"pad":"`;
  return `${head}${pad.slice(0, Math.max(0, recordBytes - head.length - 2))}"}`;
}

/** Records per second of a bare kafkajs eachBatch consumer reading the whole backlog of `topic` (a group per `run`). */
export async function bareConsumerRate(
  kafka: Kafka,
  topic: string,
  records: number,
  run = 0,
): Promise<number> {
  const consumer = kafka.consumer({
    groupId: `${topic}-bare-${run}`,
    maxBytesPerPartition: 1024 * 1024,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let seen = 0;
  let started = 0;
  const done = new Promise<number>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (started === 0) started = performance.now();
        seen += batch.messages.length;
        if (seen >= records) resolve(performance.now() - started);
      },
    });
  });
  const ms = await done;
  await consumer.disconnect();
  return (records * 1000) / ms;
}

export async function deleteTopic(kafka: Kafka, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
}

/**
 * The Kafka client the pipeline benches read with: kafkajs (the default),
 * or @platformatic/kafka with THALWEG_BENCH_KAFKA_CLIENT=platformatic (Node
 * 22+). `name` goes into the bench line; `options` into the source's.
 */
export function benchClient(): {
  readonly name: 'kafkajs' | 'platformatic';
  readonly options: { readonly kafka?: ConsumerFactory };
} {
  const wanted = process.env['THALWEG_BENCH_KAFKA_CLIENT'] ?? 'kafkajs';
  if (wanted === 'kafkajs') return { name: 'kafkajs', options: {} };
  if (wanted !== 'platformatic') {
    process.stderr.write(
      `THALWEG_BENCH_KAFKA_CLIENT: "${wanted}" is not kafkajs or platformatic\n`,
    );
    process.exit(1);
  }
  if (!platformaticSupported()) {
    process.stderr.write(
      `THALWEG_BENCH_KAFKA_CLIENT=platformatic needs Node 22+, not ${process.version}\n`,
    );
    process.exit(1);
  }
  return { name: 'platformatic', options: { kafka: platformaticConsumer } };
}
