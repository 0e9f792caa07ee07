import type { Coordination } from '@thalweg/coordination';
import { ContentDedup } from './dedup/content-dedup.js';
import {
  isDurable,
  monotonicClock,
  timerScheduler,
  type Clock,
  type ReplayableSink,
  type Scheduler,
  type Sink,
  type Source,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { handleAssignment } from './assignment-handler.js';
import type { DqAuditRecorder } from './dq/dq-audit-recorder.js';
import { auditedSecondaries, dqAuditFor } from './dq/dq-wiring.js';
import { reason, FailureLatch } from './failure-latch.js';
import { FlowGovernor } from './flow-governor.js';
import { GatingState } from './gating-state.js';
import { PerLane } from './per-lane.js';
import { parsePipelineConfig, secondaryConfig, type PipelineConfig } from './pipeline-config.js';
import { PositionCommitter } from './position-committer.js';
import { rawAckTarget } from './raw-ack-path.js';
import { RawHoleGuard } from './raw-hole-guard.js';
import {
  openRecovery,
  reconcileRawCoverage,
  type RecoveryParts,
} from './recovery/recovery-wiring.js';
import { LiveReach } from './recovery/live-reach.js';
import { liveMemoryBytes } from './memory-signal.js';
import { SecondaryLane } from './secondary-lane.js';
import type { PipelineSpec } from './topology.js';
import { positionSource } from './source-positioning.js';
import { validateTopology } from './validate-topology.js';

/** Everything a run drives, opened and checked; nothing read yet. */
export interface OpenedPipeline {
  readonly source: Source;
  readonly coverage: CoverageStore;
  readonly config: PipelineConfig;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly memoryUsage: () => number;
  /** The pipeline's log, its lines prefixed. */
  readonly log: (line: string) => void;
  readonly failure: FailureLatch;
  readonly governor: FlowGovernor;
  readonly gating: GatingState;
  /** Refuses to read a partition over a hole in raw below where it resumes (ADR 0022). */
  readonly holes: RawHoleGuard;
  readonly perLane: PerLane;
  readonly raw: ReplayableSink<SourceBatch>;
  readonly lanes: readonly SecondaryLane<unknown>[];
  readonly repair: RecoveryParts;
  /** How far live ingest has got per partition: recovery leaves the rest to it (ADR 0030). */
  readonly reach: LiveReach;
  /** The dq-audit trail's recorder (ADR 0026): flushed each flow cycle, closed at shutdown. */
  readonly dq: DqAuditRecorder;
  /** Content dedup (ADR 0036), null when no stream has it on. */
  readonly dedup: ContentDedup | null;
  /** The coordination tier the spec gave, for its health in stats; null without one. */
  readonly coordination: Coordination | null;
}

/**
 * Opening a pipeline: validates the configuration, opens the sinks with the
 * pipeline's confirm targets, checks the topology rules on what was opened,
 * merges what raw holds into its coverage, wires recovery, and positions a
 * store-managed source at its stored cursors. Nothing is read yet.
 *
 * The pipeline owns the source and the coverage store from this call on. A
 * failed open releases them (and every sink it opened), so the caller can
 * open them again in this process and retry: a LevelDB store left open
 * would refuse the retry with LEVEL_LOCKED.
 */
export async function openPipeline(spec: PipelineSpec): Promise<OpenedPipeline> {
  const userLog = spec.log ?? ((line: string) => console.info(line));
  const log = (line: string): void => {
    userLog(`thalweg pipeline: ${line}`);
  };
  const userDebug = spec.debug;
  const debug =
    userDebug === undefined
      ? () => undefined
      : (line: string): void => {
          userDebug(`thalweg pipeline: ${line}`);
        };
  try {
    return await openParts(spec, log, userLog, debug);
  } catch (error) {
    const released = await Promise.allSettled([
      spec.source.close(),
      spec.coverage.close(),
      ...(spec.dqAudit === undefined ? [] : [spec.dqAudit.close()]),
    ]);
    for (const r of released) {
      if (r.status === 'rejected') log(`releasing after a failed open: ${reason(r.reason)}`);
    }
    throw error;
  }
}

async function openParts(
  spec: PipelineSpec,
  log: (line: string) => void,
  userLog: (line: string) => void,
  debug: (line: string) => void,
): Promise<OpenedPipeline> {
  const config = parsePipelineConfig(spec.config ?? {});
  const clock = spec.clock ?? monotonicClock;
  const scheduler = spec.scheduler ?? timerScheduler;
  const { source, coverage } = spec;
  const sourceName = spec.sourceName ?? source.cluster;
  const failure = new FailureLatch(log);
  const commit =
    source.regime === 'broker-managed'
      ? (p: SourcePartition, next: number) => source.commit(p, next)
      : (p: SourcePartition, next: number) =>
          coverage.saveCursor(
            { source: sourceName, topic: p.topic, partition: p.partition },
            source.cursorAt(p, next),
          );
  const gating = new GatingState(
    new PositionCommitter(commit, config.commit.maxConsecutiveFailures, log),
  );
  const governor = new FlowGovernor(config.flowControl, config.memoryLimitBytes, clock);
  // dq-audit (ADR 0026): each secondary's checks report under its sink's id, live and in recovery.
  const dq = dqAuditFor(spec, log);
  const contentDedup = new ContentDedup(config.dedup, spec.coordination, log);
  const dedup = contentDedup.enabled ? contentDedup : null;
  const specs = auditedSecondaries(spec.secondaries ?? [], dq, (i) => lanes[i]?.id ?? `[${i}]`);
  const perLane = new PerLane({
    coverage,
    secondaries: specs.length,
    quarantine: config.flowControl.quarantine,
    writer: spec.quarantine,
    log,
    // A coverage refusal no retry can change stops the pipeline.
    onFatal: (error) => {
      failure.fail(error);
    },
  });
  const lanes = specs.map((s, i) => {
    const own = perLane.secondary(i);
    return new SecondaryLane(
      `secondaries[${i}]`,
      s.derive,
      own.recorder,
      (sink, batch, note) => {
        own.quarantine.offer(sink, batch, note);
      },
      log,
      own.covered,
    );
  });
  const opened: Sink<'primary-raw' | 'secondary', unknown>[] = [];
  let lanesStarted = false;
  try {
    const raw = await spec.primaryRaw(
      rawAckTarget(gating, governor.budget, perLane.raw.recorder, failure),
    );
    opened.push(raw);
    const sinks: Sink<'secondary', unknown>[] = [];
    for (const [i, s] of specs.entries()) {
      const lane = lanes[i];
      if (lane === undefined) continue;
      const sink = await s.open(lane.target);
      opened.push(sink);
      sinks.push(sink);
    }
    validateTopology(
      source,
      raw,
      sinks.map((s) => s.descriptor),
      config,
      coverage,
    );
    sinks.forEach((sink, i) => lanes[i]?.start(sink, secondaryConfig(config, sink.descriptor.id)));
    lanesStarted = true;
    await reconcileRawCoverage(raw, coverage);
    await seedCovered(raw, sinks, perLane, coverage);
    const reach = new LiveReach(clock, config.recovery.liveGraceMs);
    const repair = openRecovery({
      spec: { ...spec, secondaries: specs }, // dq-audit: recovery derives through the audited specs
      config,
      raw,
      sinks,
      lanes,
      coverage,
      perLane,
      reach,
      clock,
      scheduler,
      log: (line) => userLog(`thalweg recovery: ${line}`),
      dedup,
    });
    const holes = new RawHoleGuard(raw.descriptor, raw, coverage, { clock, scheduler });
    if (config.recovery.role !== 'recovery') {
      const at = { sourceName, coverage, gating, holes, reach, raw, debug };
      await positionSource(source, at, governor.throttle, log);
    }
    source.onAssignment?.((event) => {
      handleAssignment(event, gating, holes, governor.throttle, source, log, reach);
    });
    return {
      source,
      coverage,
      config,
      clock,
      scheduler,
      memoryUsage: spec.memoryUsage ?? liveMemoryBytes,
      log,
      failure,
      governor,
      gating,
      holes,
      perLane,
      raw,
      lanes,
      repair,
      reach,
      dq,
      dedup,
      coordination: spec.coordination ?? null,
    };
  } catch (error) {
    // A started lane owns its sink and closes it when stopped (nothing was
    // offered to it yet, so it drains at once).
    const drainMs = config.shutdown.secondaryDrainMs;
    const [raw] = opened;
    const releases: Promise<void>[] = lanesStarted
      ? [...(raw === undefined ? [] : [raw.close()]), ...lanes.map((l) => l.stop(drainMs))]
      : opened.map((s) => s.close());
    await Promise.allSettled(releases);
    throw error;
  }
}

/**
 * Each durable secondary's lane learns what its sink already holds over
 * what raw holds, so live ingest re-reading behind a crash does not write it
 * again (covered-spans.ts). A non-durable secondary records no coverage.
 */
async function seedCovered(
  raw: ReplayableSink<SourceBatch>,
  sinks: readonly Sink<'secondary', unknown>[],
  perLane: PerLane,
  coverage: CoverageStore,
): Promise<void> {
  const durable = sinks.filter((s) => isDurable(s.descriptor.durability));
  if (durable.length === 0) return;
  const held = await raw.held();
  for (const [i, sink] of sinks.entries()) {
    if (!isDurable(sink.descriptor.durability)) continue;
    await perLane.secondary(i).covered.seed(coverage, sink.descriptor.id, held);
  }
}
