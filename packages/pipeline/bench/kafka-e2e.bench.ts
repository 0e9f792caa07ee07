import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sinkId } from '@thalweg/connector-core';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { Pipeline } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { kafkaSource } from '@thalweg/source-kafka';
import { againstBareConsumer, childGroup, childTopic } from './topology-child.js';
import { benchBrokers, benchClient, benchKafka } from './kafka-backlog.js';

/**
 * Kafka -> pipeline -> durable raw segments, against a bare kafkajs eachBatch
 * consumer reading the same topic in the same run. The backlog is produced
 * first, so both read a deep backlog as fast as they can; the pipeline runs
 * with a 128 MiB byte budget, in a child process of its own
 * (topology-child.ts), and its RSS is sampled throughout.
 *
 * THALWEG_BENCH_RECORDS sets the backlog (default 2,000,000 records of 256
 * bytes, 512 MB: as large as the RSS bound, four times the budget).
 */
const brokers = benchBrokers('kafka-e2e');
const RECORDS = Number(process.env['THALWEG_BENCH_RECORDS'] ?? 2_000_000);
const RECORD_BYTES = 256;
const PARTITIONS = 4;
const BUDGET = 128 * 1024 * 1024;
const kafka = benchKafka(brokers);
const client = benchClient();
const topic = childTopic() ?? `bench-e2e-${Date.now().toString(36)}`;

async function pipelineRun(): Promise<{ recS: number; rssMaxMb: number; segments: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-e2e-'));
  const quiet = (): void => undefined;
  let rssMax = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, process.memoryUsage.rss());
  }, 50);
  try {
    const raw = sinkId('raw');
    const pipeline = await Pipeline.open({
      source: kafkaSource({
        mode: 'group',
        brokers,
        cluster: 'bench',
        topics: [topic],
        groupId: childGroup(topic),
        log: quiet,
        ...client.options,
      }),
      coverage: await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [raw] }),
      log: quiet,
      config: {
        memoryLimitBytes: 512 * 1024 * 1024,
        flowControl: { byteBudget: { bytes: BUDGET } },
      },
      primaryRaw: (confirm) =>
        RawSegmentSink.open({
          id: raw,
          dir: join(dir, 'raw'),
          cluster: 'bench',
          confirm,
          log: quiet,
        }),
    });
    const running = pipeline.run();
    let started = 0;
    let tick = 0;
    while (pipeline.stats().raw.durableRecords < RECORDS) {
      if (process.env['THALWEG_BENCH_TRACE'] !== undefined && ++tick % 10 === 0) {
        const st = pipeline.stats();
        process.stderr.write(
          `${st.source.records} ${st.raw.submittedRecords} ${st.raw.durableRecords} budget ${Math.round(st.flow.budget.inFlightBytes / 1e6)}MB/${Math.round(st.flow.budget.limitBytes / 1e6)} waiters ${st.flow.budget.waiters} ${st.flow.state}\n`,
        );
      }
      if (started === 0 && pipeline.stats().source.records > 0) started = performance.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - started;
    await pipeline.stop();
    const stats = await running;
    return {
      recS: (RECORDS * 1000) / ms,
      rssMaxMb: Math.round(rssMax / (1024 * 1024)),
      segments: stats.raw.durableBatches,
    };
  } finally {
    clearInterval(sampler);
    await rm(dir, { recursive: true, force: true });
  }
}

await againstBareConsumer({
  moduleUrl: import.meta.url,
  bench: 'kafka-e2e',
  kafka,
  topic,
  records: RECORDS,
  recordBytes: RECORD_BYTES,
  partitions: PARTITIONS,
  budgetBytes: BUDGET,
  run: pipelineRun,
  more: () => ({
    client: client.name,
    backlog_mb: Math.round((RECORDS * RECORD_BYTES) / (1024 * 1024)),
    target_ratio: 0.9,
    target_rss_mb: 512,
  }),
});
