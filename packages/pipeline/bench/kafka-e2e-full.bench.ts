import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { fromJson } from '@thalweg/connector-core';
import { openTopology } from '@thalweg/pipeline';
import { postgres } from '@thalweg/sink-postgres';
import { rawSegments } from '@thalweg/sink-files';
import { fakeZerobus, zerobus } from '@thalweg/sink-zerobus';
import { kafka } from '@thalweg/source-kafka';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { uniqueName, postgresUrl } from '@thalweg/test-services';
import pg from 'pg';
import { againstBareConsumer, childGroup, childTopic } from './topology-child.js';
import { benchBrokers, benchClient, benchKafka } from './kafka-backlog.js';

/**
 * The realistic topology against a bare kafkajs eachBatch consumer of the
 * same topic in the same run: Kafka -> raw segments -> a Zerobus secondary
 * (the fake transport: JSON -> Arrow -> IPC, derived on a worker thread from
 * a declared mapping) and a PostgreSQL secondary
 * (JSON -> rows, one transaction per group), with a 128 MiB byte budget
 * against a backlog four times that. The pipeline's rate is raw's: the
 * secondaries acknowledge on their own lanes (a lane that falls behind sheds
 * to gaps, counted in the line), and the run ends once raw holds the
 * backlog.
 *
 * The topology runs in a child process of its own, so its RSS is the
 * topology's: not what producing the backlog and the bare consumer left on
 * this process's heap (about 200-250 MB), which its memory signal would
 * otherwise read as its own.
 *
 * THALWEG_BENCH_RECORDS sets the backlog (default 2,000,000 records of 256 B).
 */
const brokers = benchBrokers('kafka-e2e-full');
const RECORDS = Number(process.env['THALWEG_BENCH_RECORDS'] ?? 2_000_000);
const RECORD_BYTES = 256;
const PARTITIONS = 4;
const BUDGET = 128 * 1024 * 1024;
const kafkaClient = benchKafka(brokers);
const client = benchClient();
/** The child that runs the topology is given the topic; the parent makes it. */
const topic = childTopic() ?? `bench-e2e-full-${Date.now().toString(36)}`;

interface Payload {
  readonly n: number;
  readonly pad: string;
}

const ZEROBUS_SCHEMA = BatchSchema.define({
  fields: [
    { name: 'n', type: column.int64, nullable: false },
    { name: 'pad', type: column.utf8, nullable: false },
  ],
  recordId: 'hex',
});

async function topologyRun() {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-full-'));
  const schema = uniqueName('bench_full').replaceAll('-', '_');
  const pool = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
  const quiet = (): void => undefined;
  const rssAtStart = process.memoryUsage.rss();
  let rssMax = rssAtStart;
  /** Samples per flow-control state, and how many found the source paused. */
  const flowStates: Record<string, number> = {};
  /** Where the memory was when RSS peaked: V8's heap, buffers, and what the pipeline counted. */
  let atMax: Record<string, number> = {};
  let job: Awaited<ReturnType<typeof openTopology>> | undefined;
  const mb = (n: number) => Math.round(n / (1024 * 1024));
  const sampler = setInterval(() => {
    const flow = job?.stats().flow;
    if (flow !== undefined) {
      const key = flow.sourcePaused ? `${flow.state}+paused` : flow.state;
      flowStates[key] = (flowStates[key] ?? 0) + 1;
    }
    const rss = process.memoryUsage.rss();
    if (rss <= rssMax) return;
    rssMax = rss;
    const m = process.memoryUsage();
    const st = job?.stats();
    const queued = (id: string) => st?.secondaries.find((s) => s.sink === id)?.queuedBytes ?? 0;
    atMax = {
      heap_used_mb: mb(m.heapUsed),
      heap_total_mb: mb(m.heapTotal),
      // The young generation V8 reserved on this thread: on Node 24 it grows
      // to 128 MB unless the process sets --max-semi-space-size (README).
      new_space_mb: mb(
        getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
      ),
      array_buffers_mb: mb(m.arrayBuffers),
      external_mb: mb(m.external),
      raw_durable_records: st?.raw.durableRecords ?? 0,
      budget_in_flight_mb: mb(st?.flow.budget.inFlightBytes ?? 0),
      zerobus_lane_queued_mb: mb(queued('zerobus')),
      postgres_lane_queued_mb: mb(queued('postgres')),
    };
  }, 50);
  try {
    job = await openTopology({
      source: kafka({
        brokers: [...brokers],
        cluster: 'bench',
        topics: [topic],
        groupId: childGroup(topic),
        ...client.options,
      }),
      raw: rawSegments({ dir: join(dir, 'raw') }),
      secondaries: {
        zerobus: zerobus({
          table: 'main.bench.events',
          schema: ZEROBUS_SCHEMA,
          // The fake server only counts what it acknowledges: a real table keeps its rows elsewhere.
          transport: fakeZerobus({ ackLatencyMs: 5, server: { retain: false } }),
          // Declared, so it derives on a worker thread (ADR 0042): n and pad by name.
          json: {},
          streams: 2,
        }),
        postgres: postgres({
          pool,
          table: {
            schema,
            name: 'events',
            columns: [
              { name: 'n', type: 'bigint', nullable: false },
              { name: 'pad', type: 'text', nullable: false },
            ],
          },
          row: fromJson((p: Payload) => [p.n, p.pad]),
        }),
      },
      log: quiet,
      config: {
        memoryLimitBytes: 512 * 1024 * 1024,
        flowControl: { byteBudget: { bytes: BUDGET } },
        shutdown: { secondaryDrainMs: 0 },
      },
    });
    const running = job.run();
    let started = 0;
    while (job.stats().raw.durableRecords < RECORDS) {
      if (started === 0 && job.stats().source.records > 0) started = performance.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - started;
    const during = job.stats();
    await job.stop();
    await running;
    const lane = (id: string) => during.secondaries.find((s) => s.sink === id);
    return {
      recS: (RECORDS * 1000) / ms,
      rssMaxMb: mb(rssMax),
      rssAtStartMb: mb(rssAtStart),
      atMax,
      flowStates,
      delivered: {
        zerobus: lane('zerobus')?.deliveredRecords ?? 0,
        postgres: lane('postgres')?.deliveredRecords ?? 0,
      },
      quarantined: {
        zerobus: lane('zerobus')?.quarantined ?? 0,
        postgres: lane('postgres')?.quarantined ?? 0,
      },
      shed: {
        zerobus: lane('zerobus')?.shedBatches ?? 0,
        postgres: lane('postgres')?.shedBatches ?? 0,
      },
    };
  } finally {
    clearInterval(sampler);
    await pool.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined);
    await pool.end();
    await rm(dir, { recursive: true, force: true });
  }
}

await againstBareConsumer({
  moduleUrl: import.meta.url,
  bench: 'kafka-e2e-full',
  kafka: kafkaClient,
  topic,
  records: RECORDS,
  recordBytes: RECORD_BYTES,
  partitions: PARTITIONS,
  budgetBytes: BUDGET,
  run: topologyRun,
  more: (full) => ({
    client: client.name,
    secondaries: ['zerobus-fake', 'postgres'],
    rss_mb_at_start: full.rssAtStartMb,
    at_rss_max: full.atMax,
    flow_states: full.flowStates,
    delivered_at_raw_end: full.delivered,
    shed_batches: full.shed,
    quarantined: full.quarantined,
    target_ratio: 0.5,
    target_rss_mb: 512,
  }),
});
