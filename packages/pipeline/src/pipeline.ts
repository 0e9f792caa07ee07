import type { Cancel, HealthReport, Source, SourcePartition } from '@thalweg/connector-core';
import { PipelineError } from './errors.js';
import { flowTick } from './flow-tick.js';
import { readSource } from './ingest-loop.js';
import { openPipeline, type OpenedPipeline } from './pipeline-open.js';
import type { PipelineState, PipelineStats } from './pipeline-stats.js';
import type { RecoveryBacklog } from './recovery/backlog-meter.js';
import { runRepair } from './recovery/recovery-wiring.js';
import { flushRaw, shutDown } from './shutdown-sequence.js';
import { sinkLanes, sourceLag, type PartitionLag, type SinkLane } from './sink-lanes.js';
import type { PipelineSpec } from './topology.js';

/**
 * A running topology: source -> primary raw -> secondaries.
 *
 * The gating path is source -> raw -> position. A batch read from the source
 * is registered with the position tracker, charged to the byte budget and
 * submitted to raw (ingest-loop.ts); raw's ack lane confirms it after the
 * durable write, and only then does the tracker fold it into the committable
 * position (raw-ack-path.ts), which the flow cycle commits in the background
 * (flow-tick.ts: broker commit or cursor). Secondaries get the batch after
 * raw accepted it, each through its own lane with its own coverage recorder
 * and quarantine (per-lane.ts), and record coverage after their own durable
 * acknowledgement; they never gate raw.
 */
export class Pipeline {
  private readonly startedAt: number;
  private untilCaughtUp = false;
  /** In `both`: the source ended and raw made all of it durable (untilCaughtUp may end recovery). */
  private ingestEnded = false;
  private state: PipelineState = 'opened';
  private finished: Promise<PipelineStats> | null = null;
  private stopTicking: Cancel = () => undefined;

  private constructor(private readonly parts: OpenedPipeline) {
    this.startedAt = parts.clock.now();
  }

  /**
   * Validates the configuration, opens the sinks with the pipeline's confirm
   * targets, checks the topology rules on what was opened, and positions a
   * store-managed source at its stored cursors (pipeline-open.ts). Nothing
   * is read yet.
   */
  static async open(spec: PipelineSpec): Promise<Pipeline> {
    return new Pipeline(await openPipeline(spec));
  }

  /**
   * Runs until the source ends or `stop` is called, then shuts down in order.
   * With `untilCaughtUp`, the `recovery` role ends once a pass finds no
   * secondary behind raw, and the `both` role, once the source ended, goes on
   * recovering until then; the `ingest` role refuses it (no recovery runs).
   */
  run(options: { readonly untilCaughtUp?: boolean } = {}): Promise<PipelineStats> {
    if (options.untilCaughtUp === true && this.parts.config.recovery.role === 'ingest') {
      return Promise.reject(
        new PipelineError(
          'TWG_PIPELINE_TOPOLOGY_INVALID',
          "run({ untilCaughtUp: true }): recovery.role is 'ingest', so this process never " +
            "recovers and could never catch up; use role 'both' or 'recovery'",
        ),
      );
    }
    this.untilCaughtUp ||= options.untilCaughtUp === true;
    this.finished ??= this.execute();
    return this.finished;
  }

  /**
   * The recovery backlog, in every role: each durable secondary's lag as
   * `coverageReport` computes it, as last measured (`plannedAt`) — by each
   * recovery pass, every `recovery.scanEveryMs` in the `ingest` role, and
   * once more at shutdown. Zero when nothing is behind.
   */
  backlog(): RecoveryBacklog {
    return this.parts.repair.meter.current();
  }

  /**
   * Graceful shutdown: stop reading, flush raw (its acks commit the last
   * positions), commit, drain each secondary within its deadline, record and
   * checkpoint coverage, close everything (shutdown-sequence.ts).
   */
  async stop(): Promise<PipelineStats> {
    this.parts.failure.abort.abort();
    return this.run();
  }

  health(): HealthReport {
    const { governor, perLane } = this.parts;
    return governor.health(this.state === 'running', perLane.quarantineLaneStats());
  }

  stats(): PipelineStats {
    const { gating, governor, perLane, raw, lanes, repair } = this.parts;
    const c = gating.counts;
    return {
      state: this.state,
      elapsedMs: this.parts.clock.now() - this.startedAt,
      source: {
        batches: c.sourceBatches,
        records: c.sourceRecords,
        bytes: c.sourceBytes,
        lossWindowRecords: unresumable(this.parts.source)
          ? c.sourceRecords - c.durableRecords
          : null,
      },
      raw: {
        sink: raw.descriptor.id,
        submittedBatches: c.rawBatches,
        submittedRecords: c.rawRecords,
        durableBatches: c.durableBatches,
        durableRecords: c.durableRecords,
        droppedAcks: c.droppedAcks,
        inflightSpans: gating.inflight.size,
        oversizedPieces: c.oversizedPieces,
      },
      positions: gating.committer.stats(),
      secondaries: lanes.map((l) => l.stats()),
      coverage: perLane.coverageStats(),
      quarantine: perLane.quarantineStats(),
      dq: this.parts.dq.stats(),
      dedup: this.parts.dedup?.stats() ?? [],
      coordination: this.parts.coordination?.health() ?? null,
      recovery:
        repair.runner === null ? null : { ...repair.runner.stats(), backlog: this.backlog() },
      flow: {
        ...governor.describe(),
        sourcePaused: governor.throttle.paused,
        budget: governor.budget.stats(),
      },
    };
  }

  /** Each sink's ack lanes with their live metrics, raw's first: what telemetry exports per lane. */
  lanes(): readonly SinkLane[] {
    return sinkLanes(this.parts.raw, this.parts.lanes);
  }

  /** Per partition, the source's log end minus the committed position (source lag). */
  sourceLag(): readonly PartitionLag[] {
    return sourceLag(this.parts.source, this.parts.gating.committer);
  }

  /** The committed position of a partition, as far as this pipeline stored it. */
  committed(partition: SourcePartition): number | null {
    return this.parts.gating.committer.committed(partition);
  }

  private async execute(): Promise<PipelineStats> {
    const { parts } = this;
    const { failure, config } = parts;
    this.state = 'running';
    this.stopTicking = parts.scheduler.every(config.evaluateEveryMs, () => flowTick(parts));
    parts.perLane.startQuarantine();
    const role = config.recovery.role;
    const recovering = this.runRecovery();
    if (role !== 'recovery') {
      try {
        await readSource({ ...parts, rawQuarantine: parts.perLane.raw.quarantine });
      } catch (error) {
        if (!failure.signal.aborted || failure.error !== null) failure.fail(error);
      }
    }
    // Ingest ends with its source; recovery alone runs until stopped (or
    // caught up), and so does `both` asked to catch up, once its source ended
    // and raw made all of it durable (what raw holds is then final).
    if (role === 'both' && this.untilCaughtUp && !failure.signal.aborted) {
      await flushRaw(parts.raw, failure);
      this.ingestEnded = failure.error === null;
      parts.repair.runner?.wake();
      await recovering;
    }
    if (role === 'recovery') await recovering;
    this.state = 'stopping';
    failure.abort.abort();
    await recovering;
    await shutDown({
      ...parts,
      committer: parts.gating.committer,
      secondaryDrainMs: config.shutdown.secondaryDrainMs,
      stopTicking: this.stopTicking,
    });
    if (failure.error !== null) {
      this.state = 'failed';
      throw failure.error;
    }
    this.state = 'stopped';
    return this.stats();
  }

  private async runRecovery(): Promise<void> {
    const { repair, config, failure } = this.parts;
    const role = config.recovery.role;
    try {
      await runRepair(
        repair,
        failure.signal,
        config.recovery.scanEveryMs,
        () => this.untilCaughtUp && (role === 'recovery' || this.ingestEnded),
      );
    } catch (error) {
      if (!failure.signal.aborted) failure.fail(error);
    }
  }
}

/** A source whose lost records are not read again: neither replayable nor resumable. */
function unresumable(source: Source): boolean {
  return source.origin.kind !== 'replayable' && !source.origin.resumable;
}
