import { pulsarSubscriptionSource, webSocketPort } from '@thalweg/source-pulsar';
import type { ConsumeMeasure } from './bare-consumer.js';

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
  let records = 0;
  let bytes = 0;
  let firstAt = 0;
  const started = performance.now();
  const controller = new AbortController();
  for await (const batch of source.batches(controller.signal)) {
    if (firstAt === 0) firstAt = performance.now();
    for (const r of batch.records) bytes += r.value.byteLength;
    records += batch.records.length;
    await source.commit(batch.span, batch.span.end);
    if (records >= options.records) break;
  }
  const endedAt = performance.now();
  const { acksSent, batches } = source.stats();
  await source.close();
  const steadyMs = endedAt - firstAt;
  return {
    records,
    bytes,
    totalMs: endedAt - started,
    steadyMs,
    recordsPerSec: records / (steadyMs / 1000),
    acksSent,
    batches,
  };
}
