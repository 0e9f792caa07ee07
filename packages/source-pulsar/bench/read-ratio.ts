import { uniqueName } from '@thalweg/test-services';
import { measureBareConsumer, type ConsumeMeasure } from './bare-consumer.js';
import { deletePartitionedTopic, produceBacklog } from './fixture.js';
import { line, round, type Endpoint } from './report.js';
import { measureSubscriptionSource } from './source-consumer.js';

const fields = (reader: string, m: ConsumeMeasure, run: number) => ({
  bench: 'pulsar-read',
  reader,
  run,
  records: m.records,
  value_mb: round(m.bytes / 1e6, 1),
  total_ms: round(m.totalMs),
  steady_ms: round(m.steadyMs),
  records_per_s: round(m.recordsPerSec),
});

/**
 * Produces `records` payloads of `valueBytes` to a fresh topic of
 * `partitions` partitions, then reads it back in the same run, alternately
 * with the bare WebSocket loop (the baseline) and with
 * PulsarSubscriptionSource.batches(), each on a fresh subscription,
 * `rounds` times each; the best of each side is compared.
 */
export async function readRatio(
  endpoint: Endpoint,
  records: number,
  valueBytes: number,
  partitions: number,
  rounds: number,
): Promise<void> {
  const topic = `persistent://public/default/${uniqueName('twg-bench-read')}`;
  try {
    const produced = await produceBacklog(endpoint, topic, partitions, records, valueBytes);
    line({
      bench: 'pulsar-produce',
      records,
      value_bytes: valueBytes,
      partitions,
      ms: round(produced.ms),
      records_per_s: round(produced.recordsPerSec),
    });
    let bare = 0;
    let source = 0;
    for (let run = 1; run <= rounds; run++) {
      const b = await measureBareConsumer({
        wsUrl: endpoint.wsUrl,
        topic,
        partitions,
        records,
        subscription: uniqueName('twg-bench-bare'),
      });
      line(fields('ws-bare-loop', b, run));
      bare = Math.max(bare, b.recordsPerSec);
      const s = await measureSubscriptionSource({
        ...endpoint,
        topic,
        records,
        subscription: uniqueName('twg-bench-source'),
      });
      line({
        ...fields('PulsarSubscriptionSource', s, run),
        acks_sent: s.acksSent,
        batches: s.batches,
      });
      source = Math.max(source, s.recordsPerSec);
    }
    line({
      bench: 'pulsar-read-ratio',
      baseline:
        'ws-bare-loop (the same WebSocket API over ws: pull mode, permits, individual acks, base64 decode)',
      records,
      value_bytes: valueBytes,
      partitions,
      rounds,
      best_bare_records_per_s: round(bare),
      best_source_records_per_s: round(source),
      source_over_bare: round(source / bare, 2),
      target: 0.8,
    });
  } finally {
    await deletePartitionedTopic(endpoint.adminUrl, topic);
  }
}
