import { join } from 'node:path';
import { WriteBehindCoverage } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { Pipeline, secondary } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { PostgresSink, type PgBatch, type PostgresSinkStats } from '@thalweg/sink-postgres';
import { kafkaSource } from '@thalweg/source-kafka';
import { ZerobusSink } from '@thalweg/sink-zerobus';
import { kafkaBrokers, postgresUrl } from '@thalweg/test-services';
import type { RecordBatch } from 'apache-arrow';
import type { ChildArgs } from './child-args.js';
import type { Tripwire } from './crash-point.js';
import {
  CHILD_APPLICATION_NAME,
  CLUSTER,
  eventsTable,
  harnessPool,
  PG,
  RAW,
  toPgBatch,
} from './harness-topology.js';
import {
  killableConfirm,
  killableCoverage,
  killableRaw,
  killableSecondary,
  killableTier,
} from './killable-parts.js';
import {
  harnessZerobusFactory,
  toZerobusBatch,
  ZEROBUS,
  ZEROBUS_FIELDS,
  ZEROBUS_TABLE,
} from './zerobus-topology.js';

/** How often the write-behind store checkpoints: short, so kills land during checkpoints. */
export const CHECKPOINT_INTERVAL_MS = 200;

export interface ChildTopology {
  readonly pipeline: Pipeline;
  /** The secondary's counters (null before it opened). */
  sinkStats(): PostgresSinkStats | null;
  /** The Zerobus secondary's injected poisons that fired, and its stream rebuilds. */
  zerobusStats(): { readonly poisons: number; readonly rebuilds: number };
  /** Releases what the pipeline does not own (the pools, the sink's coverage store). */
  release(): Promise<void>;
}

/**
 * One topology process: Kafka consumer group -> raw segments in `<dir>/raw`
 * -> a Postgres secondary (rows and its own coverage in one transaction)
 * and a Zerobus secondary (the fake transport, its server persisting every
 * batch before acknowledging it, poisoned streams injected at the waits the
 * parent chose), with the pipeline's coverage in a write-behind store (LevelDB in
 * `<dir>/coverage`, colocated with raw, checkpointed to Postgres). Every
 * part the crash points live in is wrapped with the tripwire.
 */
export async function openChildTopology(
  args: ChildArgs,
  wire: Tripwire,
  log: (line: string) => void,
): Promise<ChildTopology> {
  const pool = harnessPool(postgresUrl(), CHILD_APPLICATION_NAME, 6, log);
  const durable = await PostgresCoverage.open({
    pool,
    schema: args.coverageSchema,
    sinks: [RAW, PG, ZEROBUS],
  });
  const local = await LevelDbCoverage.open({
    location: join(args.dir, 'coverage'),
    sinks: [RAW, PG, ZEROBUS],
  });
  const coverage = new WriteBehindCoverage({
    local,
    durable: killableTier(durable, wire),
    checkpointIntervalMs: CHECKPOINT_INTERVAL_MS,
    onCheckpointError: (error) => {
      log(`checkpoint failed (retried next interval): ${String(error)}`);
    },
  });
  const sinkCoverage = await PostgresCoverage.open({ pool, schema: args.sinkSchema, sinks: [PG] });
  const source = kafkaSource({
    mode: 'group',
    brokers: kafkaBrokers(),
    cluster: CLUSTER,
    topics: [args.topic],
    groupId: args.group,
    // The broker's minimum; a killed member holds its partitions until its
    // session ends or, sooner, until the rejoin a new member starts times
    // out on it (the short rebalance timeout is what keeps cycles short).
    sessionTimeout: 6_000,
    rebalanceTimeout: 1_500,
    heartbeatInterval: 200,
    maxWaitTimeInMs: 100,
    // Small fetches, so that kills land in the middle of a backlog.
    maxBytesPerPartition: 16 * 1024,
    log,
  });
  let sink: PostgresSink | null = null;
  let zerobus: ZerobusSink<'secondary'> | null = null;
  let poisons = 0;
  const server = harnessZerobusFactory(args.dir, args.zerobusPoisonWaits, () => {
    poisons += 1;
  });
  const pipeline = await Pipeline.open({
    source,
    coverage: killableCoverage(coverage, wire),
    log,
    config: {
      maxBatchRecords: args.batchRecords,
      secondaries: {
        [PG]: { maxQueuedBatches: args.laneBatches },
        [ZEROBUS]: { maxQueuedBatches: args.laneBatches },
      },
      recovery: {
        role: args.role,
        windowRecords: args.windowRecords,
        scanEveryMs: 1_000,
      },
      shutdown: { secondaryDrainMs: 10_000 },
    },
    primaryRaw: async (confirm) =>
      killableRaw(
        await RawSegmentSink.open({
          id: RAW,
          dir: join(args.dir, 'raw'),
          cluster: CLUSTER,
          confirm: killableConfirm(confirm, wire, 'raw-acked'),
          log,
        }),
        wire,
      ),
    secondaries: [
      secondary<PgBatch>({
        open: async (confirm) => {
          const opened = await PostgresSink.open({
            id: PG,
            pool,
            table: eventsTable(args.sinkSchema),
            confirm: killableConfirm(confirm, wire, 'secondary-acked'),
            coverage: sinkCoverage,
            onError: (error) => {
              log(`postgres sink: ${error.message}`);
            },
            log,
          });
          sink = opened;
          return killableSecondary(opened, wire, args.role === 'recovery');
        },
        derive: toPgBatch,
      }),
      secondary<RecordBatch>({
        open: (confirm) => {
          const opened = new ZerobusSink<'secondary'>({
            id: ZEROBUS,
            config: {
              table: ZEROBUS_TABLE,
              streams: 1,
              // Rebuild a poisoned stream soon: a child lives for seconds.
              rebuild: { baseDelayMs: 50, maxDelayMs: 400 },
            },
            fields: ZEROBUS_FIELDS,
            factory: server.factory,
            confirm: killableConfirm(confirm, wire, 'secondary-acked'),
            log,
          });
          zerobus = opened;
          return killableSecondary(opened, wire, args.role === 'recovery');
        },
        derive: toZerobusBatch,
      }),
    ],
  });
  return {
    pipeline,
    sinkStats: () => (sink === null ? null : sink.stats()),
    zerobusStats: () => ({
      poisons,
      rebuilds: (zerobus?.metrics() ?? []).reduce((n, m) => n + m.rebuilds.value, 0),
    }),
    release: async () => {
      await server.close();
      await sinkCoverage.close();
      await pool.end();
    },
  };
}
