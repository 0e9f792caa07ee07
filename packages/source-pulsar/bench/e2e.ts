import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { pulsar } from '@thalweg/source-pulsar';
import { uniqueName } from '@thalweg/test-services';
import { measureBareConsumer } from './bare-consumer.js';
import { withBacklog } from './fixture.js';
import { line, round, type Endpoint } from './report.js';

const MiB = 1024 * 1024;
const BUDGET = 128 * MiB;

/**
 * One run of Pulsar -> pipeline -> durable raw segments on a fresh
 * Exclusive subscription, with a 128 MiB byte budget, until raw holds
 * `records`; the rate is from the first record the source took to the
 * last one raw made durable. RSS is sampled every 50 ms throughout.
 */
async function pipelineRun(
  endpoint: Endpoint,
  topic: string,
  records: number,
): Promise<{ recS: number; rssMaxMb: number; segments: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-pulsar-e2e-'));
  const quiet = (): void => undefined;
  let rssMax = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, process.memoryUsage.rss());
  }, 50);
  try {
    const job = await openTopology({
      source: pulsar({
        ...endpoint,
        cluster: 'bench',
        topics: [topic],
        subscription: uniqueName('twg-bench-pipeline'),
        type: 'Exclusive',
        partitionPollMs: 0,
      }),
      raw: rawSegments({ dir: join(dir, 'raw') }),
      config: {
        memoryLimitBytes: 512 * MiB,
        flowControl: { byteBudget: { bytes: BUDGET } },
      },
      log: quiet,
    });
    const running = job.run();
    let started = 0;
    while (job.stats().raw.durableRecords < records) {
      if (started === 0 && job.stats().source.records > 0) started = performance.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - started;
    const stats = await job.stop();
    await running;
    return {
      recS: (records * 1000) / ms,
      rssMaxMb: Math.round(rssMax / MiB),
      segments: stats.raw.durableBatches,
    };
  } finally {
    clearInterval(sampler);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Pulsar -> raw against the bare WebSocket loop reading the same topic in
 * the same run. The backlog (`records` payloads of `valueBytes`, above the
 * byte budget) is produced first, so both read a deep backlog as fast as
 * they can; rounds alternate, best of each reported.
 */
export async function e2e(
  endpoint: Endpoint,
  records: number,
  valueBytes: number,
  partitions: number,
  rounds: number,
): Promise<void> {
  await withBacklog(
    endpoint,
    'twg-bench-e2e',
    { partitions, records, valueBytes },
    async (backlog) => {
      const { topic } = backlog;
      let bare = 0;
      let piped = 0;
      let rssMaxMb = 0;
      let segments = 0;
      for (let run = 1; run <= rounds; run++) {
        const b = await measureBareConsumer(endpoint.wsUrl, backlog);
        bare = Math.max(bare, b.recordsPerSec);
        const p = await pipelineRun(endpoint, topic, records);
        line({
          bench: 'pulsar-e2e-round',
          run,
          bare_consumer_rec_s: round(b.recordsPerSec),
          pipeline_rec_s: round(p.recS),
          rss_mb_max: p.rssMaxMb,
          raw_segments: p.segments,
        });
        piped = Math.max(piped, p.recS);
        rssMaxMb = Math.max(rssMaxMb, p.rssMaxMb);
        segments = p.segments;
      }
      line({
        bench: 'pulsar-e2e',
        records,
        record_bytes: valueBytes,
        partitions,
        rounds,
        backlog_mb: round((records * valueBytes) / MiB),
        byte_budget_mb: BUDGET / MiB,
        pipeline_rec_s: round(piped),
        bare_consumer_rec_s: round(bare),
        ratio: round(piped / bare, 3),
        rss_mb_max: rssMaxMb,
        raw_segments: segments,
        target_ratio: 0.8,
        target_rss_mb: 512,
      });
    },
  );
}
