import { join } from 'node:path';
import type { RawPart, SinkId } from '@thalweg/connector-core';
import { WriteBehindCoverage, type CoverageStore } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { openTopology, type SecondaryParts, type Topology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { postgres, type PostgresSinkStats } from '@thalweg/sink-postgres';
import { zerobus } from '@thalweg/sink-zerobus';
import { kafka } from '@thalweg/source-kafka';
import { pulsar } from '@thalweg/source-pulsar';
import { kafkaBrokers, postgresUrl, pulsar as pulsarEndpoint } from '@thalweg/test-services';
import type { ChildArgs } from './child-args.js';
import type { Tripwire } from './crash-point.js';
import {
  CHILD_APPLICATION_NAME,
  CLUSTER,
  eventsTable,
  harnessPool,
  PG,
  PG_NAME,
  pgRow,
} from './harness-topology.js';
import { killableRawPart, killableSecondaryPart } from './killable-part.js';
import { killableCoverage, killableTier } from './killable-parts.js';
import {
  harnessZerobusFactory,
  ZEROBUS_NAME,
  ZEROBUS_SCHEMA,
  ZEROBUS_TABLE,
  zerobusRow,
} from './zerobus-topology.js';

/** How often the write-behind store checkpoints: short, so kills land during checkpoints. */
export const CHECKPOINT_INTERVAL_MS = 200;

export interface ChildTopology {
  readonly pipeline: Pick<
    Topology<RawPart, SecondaryParts>,
    'run' | 'stop' | 'stats' | 'backlog' | 'committed'
  >;
  /** The secondary's counters (null before it opened). */
  sinkStats(): PostgresSinkStats | null;
  /** The Zerobus secondary's injected poisons that fired, and its stream rebuilds. */
  zerobusStats(): { readonly poisons: number; readonly rebuilds: number };
  /** Releases what the pipeline does not own (the pools, the sink's coverage store). */
  release(): Promise<void>;
}

/**
 * One topology process: a Kafka consumer group or a Pulsar subscription (per
 * `--source`) -> raw segments in `<dir>/raw`
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
  // The topology's coverage: LevelDB next to raw, checkpointed to Postgres, for the declared sinks.
  const coverage = async (sinks: readonly SinkId[]): Promise<CoverageStore> => {
    const durable = await PostgresCoverage.open({ pool, schema: args.coverageSchema, sinks });
    const local = await LevelDbCoverage.open({ location: join(args.dir, 'coverage'), sinks });
    const store = new WriteBehindCoverage({
      local,
      durable: killableTier(durable, wire),
      checkpointIntervalMs: CHECKPOINT_INTERVAL_MS,
      onCheckpointError: (error) => {
        log(`checkpoint failed (retried next interval): ${String(error)}`);
      },
    });
    return killableCoverage(store, wire);
  };
  const sinkCoverage = await PostgresCoverage.open({ pool, schema: args.sinkSchema, sinks: [PG] });
  const recovering = args.role === 'recovery';
  let poisons = 0;
  const server = harnessZerobusFactory(args.dir, args.zerobusPoisonWaits, () => {
    poisons += 1;
  });
  const job = await openTopology({
    source: args.source === 'pulsar' ? pulsarPart(args) : kafkaPart(args),
    raw: killableRawPart(rawSegments({ dir: join(args.dir, 'raw') }), wire),
    secondaries: {
      [PG_NAME]: killableSecondaryPart(
        postgres({
          pool,
          table: eventsTable(args.sinkSchema),
          // The table's own coverage, committed with its rows: what the audit checks rows against.
          coverage: sinkCoverage,
          row: pgRow,
          lane: { maxQueuedBatches: args.laneBatches },
        }),
        wire,
        recovering,
      ),
      [ZEROBUS_NAME]: killableSecondaryPart(
        zerobus({
          table: ZEROBUS_TABLE,
          schema: ZEROBUS_SCHEMA,
          transport: server.factory,
          row: zerobusRow,
          streams: 1,
          // Rebuild a poisoned stream soon: a child lives for seconds.
          rebuild: { baseDelayMs: 50, maxDelayMs: 400 },
          lane: { maxQueuedBatches: args.laneBatches },
        }),
        wire,
        recovering,
      ),
    },
    coverage,
    log,
    config: {
      maxBatchRecords: args.batchRecords,
      recovery: {
        role: args.role,
        windowRecords: args.windowRecords,
        scanEveryMs: 1_000,
      },
      shutdown: { secondaryDrainMs: 10_000 },
    },
  });
  return {
    pipeline: job,
    sinkStats: () => job.stats().sinks[PG_NAME],
    zerobusStats: () => ({ poisons, rebuilds: job.stats().sinks[ZEROBUS_NAME]?.rebuilds ?? 0 }),
    release: async () => {
      await server.close();
      await sinkCoverage.close();
      await pool.end();
    },
  };
}

/** The run's Kafka consumer group. */
function kafkaPart(args: ChildArgs) {
  return kafka({
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
  });
}

/**
 * The run's Pulsar subscription, Shared or Failover as the parent chose for
 * the run, from the earliest message (the parent creates it before the
 * first record anyway).
 */
function pulsarPart(args: ChildArgs) {
  const { wsUrl, adminUrl } = pulsarEndpoint();
  return pulsar({
    wsUrl,
    adminUrl,
    cluster: CLUSTER,
    topics: [args.topic],
    subscription: args.group,
    type: args.pulsarType,
    initialPosition: 'Earliest',
  });
}
