import { kafkaSource, type ConsumerFactory } from '@thalweg/source-kafka';
import { meterBatches, type ConsumeMeasure } from '@thalweg/test-services';

/**
 * The same measurement as `measureBareConsumer`, through
 * `KafkaGroupSource.batches()`: the client (`kafka`, kafkajs by default)
 * fetches, the source converts each batch to a SourceBatch, queues it and
 * yields it; the loop counts records and value bytes.
 */
export async function measureGroupSource(options: {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly records: number;
  readonly groupId: string;
  readonly kafka?: ConsumerFactory;
}): Promise<ConsumeMeasure & { readonly queuePauses: number }> {
  const source = kafkaSource({
    mode: 'group',
    brokers: options.brokers,
    cluster: 'bench',
    topics: [options.topic],
    groupId: options.groupId,
    clientId: 'thalweg-bench-source',
    log: () => undefined,
    ...(options.kafka === undefined ? {} : { kafka: options.kafka }),
  });
  const controller = new AbortController();
  const measured = await meterBatches(source.batches(controller.signal), options.records);
  const queuePauses = source.stats().queuePauses;
  await source.close();
  return { ...measured, queuePauses };
}
