import type { Admin, Producer } from 'kafkajs';

/**
 * Fills a fresh topic with `records` values of `size` bytes, spread evenly
 * over its partitions, several requests in flight. Returns records per second.
 */
export async function produceFixture(
  admin: Admin,
  producer: Producer,
  topic: string,
  partitions: number,
  records: number,
  size: number,
): Promise<{ ms: number; recordsPerSec: number }> {
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions }],
    waitForLeaders: true,
  });
  const value = Buffer.alloc(size, 0x61);
  const chunk = 5_000;
  const inFlight = 4;
  const started = performance.now();
  for (let from = 0; from < records; from += chunk * inFlight) {
    const sends: Promise<unknown>[] = [];
    for (let c = from; c < Math.min(records, from + chunk * inFlight); c += chunk) {
      const n = Math.min(chunk, records - c);
      sends.push(
        producer.send({
          topic,
          acks: 1,
          messages: Array.from({ length: n }, (_, k) => ({
            partition: (c + k) % partitions,
            value,
          })),
        }),
      );
    }
    await Promise.all(sends);
  }
  const ms = performance.now() - started;
  return { ms, recordsPerSec: records / (ms / 1000) };
}
