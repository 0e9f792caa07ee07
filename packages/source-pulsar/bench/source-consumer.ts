import { pulsarSubscriptionSource, webSocketPort } from '@thalweg/source-pulsar';
import { meterBatches, type ConsumeMeasure } from '@thalweg/test-services';

/**
 * The same measurement as `measureBareConsumer`, through
 * `PulsarSubscriptionSource.batches()` over `webSocketPort`: an Exclusive
 * subscription, the source parses each frame, converts it to a record,
 * queues and yields it in batches; the loop counts records and value bytes
 * and commits each batch at once, so every message is acknowledged
 * individually as the bare loop does.
 */
export async function measureSubscriptionSource(options: {
  readonly wsUrl: string;
  readonly adminUrl: string;
  readonly topic: string;
  readonly records: number;
  readonly subscription: string;
}): Promise<ConsumeMeasure & { readonly acksSent: number; readonly batches: number }> {
  const source = pulsarSubscriptionSource({
    port: webSocketPort({ wsUrl: options.wsUrl, adminUrl: options.adminUrl }),
    cluster: 'bench',
    topics: [options.topic],
    subscription: options.subscription,
    type: 'Exclusive',
    partitionPollMs: 0,
    log: () => undefined,
  });
  const controller = new AbortController();
  const measured = await meterBatches(source.batches(controller.signal), options.records, (b) =>
    source.commit(b.span, b.span.end),
  );
  const { acksSent, batches } = source.stats();
  await source.close();
  return { ...measured, acksSent, batches };
}
