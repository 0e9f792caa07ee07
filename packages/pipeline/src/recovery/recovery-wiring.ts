import { hostname } from 'node:os';
import {
  isDurable,
  type Clock,
  type ReplayableSink,
  type Scheduler,
  type Sink,
  type SinkId,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import type { ContentDedup } from '../dedup/content-dedup.js';
import type { LaneOwned, PerLane } from '../per-lane.js';
import type { PipelineConfig } from '../pipeline-config.js';
import type { SecondaryLane } from '../secondary-lane.js';
import { emptyReceipt } from '../vacuous-receipt.js';
import type { PipelineSpec } from '../topology.js';
import { BacklogMeter } from './backlog-meter.js';
import type { LiveReach } from './live-reach.js';
import { RecoveryRunner } from './recovery-runner.js';
import type { ReplayTarget } from './replay-window.js';

/**
 * Raw's coverage is recorded from its receipts off the ack path, so a crash
 * between raw's durable write and that record leaves it lagging what raw
 * holds. Raw itself knows exactly: merge that in at open (it is durable by
 * construction), so every reader of the store sees what raw really has.
 */
export async function reconcileRawCoverage(
  raw: ReplayableSink<SourceBatch>,
  coverage: CoverageStore,
): Promise<void> {
  const held = await raw.held();
  const deltas = held
    .filter((h) => h.spans.length > 0)
    .map((h) => ({
      key: { sink: raw.descriptor.id, topic: h.partition.topic, partition: h.partition.partition },
      ranges: h.spans.map((s) => ({ start: s.start, end: s.end })),
    }));
  if (deltas.length > 0) await coverage.merge(deltas);
}

export interface RecoveryWiring {
  readonly spec: PipelineSpec;
  readonly config: PipelineConfig;
  readonly raw: ReplayableSink<SourceBatch>;
  readonly sinks: readonly Sink<'secondary', unknown>[];
  readonly lanes: readonly SecondaryLane<unknown>[];
  readonly coverage: CoverageStore;
  /** Each secondary's own recorder and quarantine: a replay goes through its lane's. */
  readonly perLane: PerLane;
  /** How far live ingest has got in each partition (the `both` role leaves the rest to it). */
  readonly reach: LiveReach;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: (line: string) => void;
  readonly dedup: ContentDedup | null;
}

/** What recovery repairs, and recovery itself when this process runs it (not in `ingest`). */
export interface RecoveryParts {
  readonly meter: BacklogMeter;
  readonly runner: RecoveryRunner | null;
  /** Where each repaired secondary's live lane may still deliver on its own (see planRecovery). */
  readonly liveFloor: (sink: SinkId, partition: SourcePartition) => number | null;
}

/**
 * Recovery drives the same sinks and derivations; non-durable secondaries
 * opted out of it, and are left out of the backlog too (they never catch up).
 */
export function openRecovery(w: RecoveryWiring): RecoveryParts {
  const targets = new Map<SinkId, ReplayTarget<unknown>>();
  const laneOf = new Map<SinkId, SecondaryLane<unknown>>();
  const ownOf = new Map<SinkId, LaneOwned>();
  w.sinks.forEach((sink, i) => {
    const derive = w.spec.secondaries?.[i]?.derive;
    const lane = w.lanes[i];
    const own = w.perLane.secondaries[i];
    if (derive === undefined || !isDurable(sink.descriptor.durability)) return;
    targets.set(sink.descriptor.id, { sink, derive });
    if (lane !== undefined) laneOf.set(sink.descriptor.id, lane);
    if (own !== undefined) ownOf.set(sink.descriptor.id, own);
  });
  const config = w.config.recovery;
  const meter = new BacklogMeter({
    raw: w.raw,
    coverage: w.coverage,
    sinks: [...targets.keys()],
    writeHandedOver: () => w.perLane.writeSecondariesHandedOver(),
    leases: w.spec.leases,
    windowRecords: config.windowRecords,
    clock: w.clock,
    scheduler: w.scheduler,
    log: w.log,
  });
  // In the recovery role there is no live lane; elsewhere, it owns what it holds.
  const liveFloor = (sink: SinkId, partition: SourcePartition): number | null => {
    const lane = laneOf.get(sink);
    if (config.role === 'recovery' || lane === undefined) return null;
    const pending = lane.pendingFloor(partition);
    // In `both`, also what live ingest will read again and offer to a lane
    // that still runs (ADR 0030); a failed lane leaves every gap to recovery.
    const ahead =
      config.role === 'both' && lane.current.kind === 'running' ? w.reach.floor(partition) : null;
    if (pending === null) return ahead;
    return ahead === null ? pending : Math.min(pending, ahead);
  };
  if (config.role === 'ingest') return { meter, runner: null, liveFloor };
  const runner = new RecoveryRunner({
    raw: w.raw,
    coverage: w.coverage,
    targets,
    writeHandedOver: async (sink) => (await ownOf.get(sink)?.recorder.writeHandedOver()) ?? true,
    meter,
    leases: w.spec.leases,
    holder: config.holder ?? `${hostname()}:${process.pid}`,
    config,
    maxRecordBytes: w.config.maxRecordBytes,
    ...(w.dedup === null
      ? {}
      : { dedup: (batch: SourceBatch) => w.dedup?.filter(batch) ?? Promise.resolve(batch) }),
    clock: w.clock,
    scheduler: w.scheduler,
    quarantine: (lane, sink, batch, note) => {
      ownOf.get(lane)?.quarantine.offer(sink, batch, note);
    },
    recordEmpty: (sink, span) => {
      const durability = targets.get(sink)?.sink.descriptor.durability;
      if (durability !== undefined && isDurable(durability)) {
        ownOf.get(sink)?.recorder.add(emptyReceipt(sink, span, durability.kind));
      }
    },
    liveFloor,
    claim: (window) => {
      const covered = ownOf.get(window.sink)?.covered;
      const partition = { topic: window.topic, partition: window.partition };
      covered?.claim(partition, window.gaps);
      return () => covered?.release(partition, window.gaps);
    },
    log: w.log,
  });
  return { meter, runner, liveFloor };
}

/**
 * Runs recovery passes (see RecoveryRunner.run for `caughtUpEnds`) or, in
 * the `ingest` role where no pass measures, samples the backlog every
 * `scanEveryMs`, until `signal` aborts.
 */
export async function runRepair(
  parts: RecoveryParts,
  signal: AbortSignal,
  scanEveryMs: number,
  caughtUpEnds: () => boolean,
): Promise<void> {
  if (parts.runner === null) await parts.meter.run(signal, scanEveryMs, parts.liveFloor);
  else await parts.runner.run(signal, caughtUpEnds);
}

/**
 * The last measurement, at shutdown: with every lane drained and raw's
 * holdings merged into the store, the backlog a stopped pipeline reports is
 * exactly what `coverageReport` then reads from the store.
 */
export async function measureFinal(
  parts: RecoveryParts,
  raw: ReplayableSink<SourceBatch>,
  coverage: CoverageStore,
): Promise<void> {
  await reconcileRawCoverage(raw, coverage);
  await parts.meter.sample(() => null);
}
