import {
  partitionKey,
  pause,
  type Clock,
  type HeldPartition,
  type Scheduler,
  type ReplayableSink,
  type SinkId,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import { RangeSet, type CoverageStore, type LeaseStore } from '@thalweg/offset-store';
import { planRecovery, type RecoveryPlan, type RecoveryWindow } from './recovery-window.js';

/** What an autoscaler reads: zero everywhere when nothing is behind. */
export interface RecoveryBacklog {
  /** Windows of the last plan that no live lease held. */
  readonly unclaimedWindows: number;
  /** Offsets raw holds that the furthest-behind destination does not. */
  readonly maxLagRecords: number;
  /** Per durable secondary, its `lagRecords` in `coverageReport`. */
  readonly lagBySink: Readonly<Record<string, number>>;
  /**
   * Offsets raw's recorded coverage holds (recorded after its durable ack)
   * that its reads do not show yet: a lakehouse raw's metadata lag (its
   * Iceberg metadata trailing its commits). Recovery cannot replay them
   * until they show. Stays 0 for raw on local disk.
   */
  readonly rawUnreadRecords: number;
  /** When it was measured (clock milliseconds), null before the first time. */
  readonly plannedAt: number | null;
}

export const NO_BACKLOG: RecoveryBacklog = {
  unclaimedWindows: 0,
  maxLagRecords: 0,
  lagBySink: {},
  rawUnreadRecords: 0,
  plannedAt: null,
};

export interface BacklogMeterDeps {
  readonly raw: ReplayableSink<SourceBatch>;
  readonly coverage: CoverageStore;
  /** The secondaries recovery repairs (durable ones): the only lag that can reach zero. */
  readonly sinks: readonly SinkId[];
  /** Writes what the secondaries' ack lanes handed over so far (see PerLane). */
  readonly writeHandedOver: () => Promise<unknown>;
  readonly leases: LeaseStore | undefined;
  readonly windowRecords: number;
  readonly clock: Clock;
  /** Where the `ingest` role's sampling interval runs. */
  readonly scheduler: Scheduler;
  readonly log: (line: string) => void;
}

/**
 * Measures the backlog the way recovery plans: against what raw holds, with
 * what the ack lanes handed over written first, through `planRecovery`
 * (whose lag is `coverageReport`'s). A recovery pass measures as it plans;
 * in the `ingest` role, where no pass runs, `run` samples on an interval;
 * the pipeline measures once more at shutdown, after every lane drained and
 * raw's holdings are in the store, so that the backlog a stopped pipeline
 * reports is exactly what `thalweg coverage` then reads from the store.
 */
export class BacklogMeter {
  private last: RecoveryBacklog = NO_BACKLOG;

  constructor(private readonly deps: BacklogMeterDeps) {}

  current(): RecoveryBacklog {
    return this.last;
  }

  /** Plans from the freshest coverage, records the backlog, returns the plan. */
  async sample(
    liveFloor: (sink: SinkId, partition: SourcePartition) => number | null,
  ): Promise<RecoveryPlan> {
    const { deps } = this;
    const rawHeld = await deps.raw.held();
    // The live floors are read before the coverage is written, not after: a
    // span a lane settles in between is no longer pending and not yet
    // covered, and would be replayed beside the live lane (every span, under
    // load). Whatever raw held was offered to the lanes before it was
    // durable: by now it is pending (at or above the floor), or settled with
    // its receipt handed over (written next), or a true gap.
    const floors = new Map<string, number | null>();
    for (const { partition } of rawHeld) {
      for (const sink of deps.sinks)
        floors.set(floorKey(sink, partition), liveFloor(sink, partition));
    }
    // What the ack lanes handed over so far counts: plan from the freshest
    // coverage (not a bare flush: one already running holds an older
    // snapshot; not drain: under live acknowledgements it may never return).
    await deps.writeHandedOver();
    const plan = await planRecovery(
      deps.coverage,
      rawHeld,
      deps.sinks,
      deps.windowRecords,
      (sink, partition) => floors.get(floorKey(sink, partition)) ?? null,
    );
    this.last = {
      unclaimedWindows: await this.unclaimed(plan.windows),
      maxLagRecords: Math.max(0, ...Object.values(plan.lagBySink)),
      lagBySink: plan.lagBySink,
      rawUnreadRecords: await this.unread(rawHeld),
      plannedAt: deps.clock.now(),
    };
    return plan;
  }

  /** Samples every `everyMs` until `signal` aborts; a failed sample is logged, never thrown. */
  async run(
    signal: AbortSignal,
    everyMs: number,
    liveFloor: (sink: SinkId, partition: SourcePartition) => number | null,
  ): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.sample(liveFloor);
      } catch (error) {
        // A metric must never stop ingest; the last value stays, with its age in plannedAt.
        this.deps.log(
          `measuring the backlog failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      await pause(this.deps.scheduler, everyMs, signal);
    }
  }

  /** What raw's coverage recorded and its reads (`held`) do not show. */
  private async unread(rawHeld: readonly HeldPartition[]): Promise<number> {
    const { coverage, raw } = this.deps;
    const held = new Map(rawHeld.map((h) => [partitionKey(h.partition), RangeSet.of(h.spans)]));
    let unread = 0;
    for (const key of await coverage.destinations()) {
      if (key.sink !== raw.descriptor.id) continue;
      const shown = held.get(partitionKey(key)) ?? RangeSet.of([]);
      for (const r of (await coverage.covered(key)).ranges())
        for (const g of shown.gaps(r.start, r.end)) unread += g.end - g.start;
    }
    return unread;
  }

  private async unclaimed(windows: readonly RecoveryWindow[]): Promise<number> {
    const leases = this.deps.leases;
    if (leases === undefined) return windows.length;
    let n = 0;
    for (const w of windows) {
      const state = await leases.state(w.key);
      if (state.kind !== 'held') n += 1;
    }
    return n;
  }
}

function floorKey(sink: SinkId, partition: SourcePartition): string {
  return `${sink}\u0000${partitionKey(partition)}`;
}
