import { CompressionTypes, Kafka, logLevel } from 'kafkajs';

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
  const pad = 'x'.repeat(recordBytes - 40);
  // A send of at most 2 MiB: under the broker's 1 MB message bound per partition.
  const chunk = Math.min(5000, Math.floor((2 * 1024 * 1024) / recordBytes));
  const inflight: Promise<unknown>[] = [];
  for (let at = 0; at < records; at += chunk) {
    const messages = Array.from({ length: Math.min(chunk, records - at) }, (_, k) => ({
      partition: (at + k) % partitions,
      value: `{"n":${String(at + k).padStart(12, '0')},"pad":"${pad}"}`,
    }));
    inflight.push(producer.send({ topic, messages, compression: CompressionTypes.None, acks: 1 }));
    if (inflight.length >= 4) await inflight.shift();
  }
  await Promise.all(inflight);
  await producer.disconnect();
}

export async function deleteTopic(kafka: Kafka, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
}
