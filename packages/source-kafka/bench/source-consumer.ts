import { kafkaSource } from '@thalweg/source-kafka';
import type { ConsumeMeasure } from './bare-consumer.js';

/**
 * The same measurement as `measureBareConsumer`, through
 * `KafkaGroupSource.batches()`: kafkajs fetches, the source converts each
 * batch to a SourceBatch, queues it and yields it; the loop counts records
 * and value bytes.
 */
export async function measureGroupSource(options: {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly records: number;
  readonly groupId: string;
}): Promise<ConsumeMeasure & { readonly queuePauses: number }> {
  const source = kafkaSource({
    mode: 'group',
    brokers: options.brokers,
    cluster: 'bench',
    topics: [options.topic],
    groupId: options.groupId,
    clientId: 'thalweg-bench-source',
    log: () => undefined,
  });
  let records = 0;
  let bytes = 0;
  let firstAt = 0;
  const started = performance.now();
  const controller = new AbortController();
  for await (const batch of source.batches(controller.signal)) {
    if (firstAt === 0) firstAt = performance.now();
    for (const r of batch.records) bytes += r.value.byteLength;
    records += batch.records.length;
    if (records >= options.records) break;
  }
  const endedAt = performance.now();
  const queuePauses = source.stats().queuePauses;
  await source.close();
  const steadyMs = endedAt - firstAt;
  return {
    records,
    bytes,
    totalMs: endedAt - started,
    steadyMs,
    recordsPerSec: records / (steadyMs / 1000),
    queuePauses,
  };
}
