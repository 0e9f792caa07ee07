import { readFields, uniqueName, type ConsumeMeasure } from '@thalweg/test-services';
import { measureBareConsumer } from './bare-consumer.js';
import { withBacklog } from './fixture.js';
import { line, round, type Endpoint } from './report.js';
import { measureSubscriptionSource } from './source-consumer.js';

const fields = (reader: string, m: ConsumeMeasure, run: number) =>
  readFields('pulsar-read', reader, m, run);

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
  await withBacklog(
    endpoint,
    'twg-bench-read',
    { partitions, records, valueBytes },
    async (backlog) => {
      const { topic } = backlog;
      let bare = 0;
      let source = 0;
      for (let run = 1; run <= rounds; run++) {
        const b = await measureBareConsumer(endpoint.wsUrl, backlog);
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
    },
  );
}
