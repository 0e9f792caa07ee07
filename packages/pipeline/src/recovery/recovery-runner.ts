import {
  partitionKey,
  type Clock,
  type OffsetSpan,
  type ReplayableSink,
  type SinkId,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import type { CoverageStore, Lease, LeaseStore } from '@thalweg/offset-store';
import type { CoverageRecorder } from '../coverage-recorder.js';
import type { QuarantineNote } from '../topology.js';
import { planRecovery, type RecoveryWindow } from './recovery-window.js';
import type { RecoveryConfig } from './recovery-config.js';
import { replayWindow, type ReplayOutcome, type ReplayTarget } from './replay-window.js';

/** What an autoscaler reads: zero everywhere when nothing is behind. */
export interface RecoveryBacklog {
  /** Windows of the last plan that no live lease held. */
  readonly unclaimedWindows: number;
  /** Offsets raw holds that the furthest-behind destination does not. */
  readonly maxLagRecords: number;
  readonly lagBySink: Readonly<Record<string, number>>;
  /** When the last plan was made (clock milliseconds), null before the first. */
  readonly plannedAt: number | null;
}

export interface RecoveryStats {
  readonly passes: number;
  readonly windowsReplayed: number;
  readonly windowsLost: number;
  readonly windowsTimedOut: number;
  readonly windowsFailed: number;
  readonly recordsReplayed: number;
  /** Quarantined records not re-sent under `skip-dlq`: the quarantine view of those windows is incomplete. */
  readonly quarantineSkipped: number;
  readonly incompleteQuarantineWindows: readonly string[];
}

export interface RecoveryDeps {
  readonly raw: ReplayableSink<SourceBatch>;
  readonly coverage: CoverageStore;
  readonly targets: ReadonlyMap<SinkId, ReplayTarget<unknown>>;
  readonly recorder: CoverageRecorder;
  readonly leases: LeaseStore | undefined;
  readonly holder: string;
  readonly config: RecoveryConfig;
  /** The pipeline's `maxRecordBytes`: larger records never reach a secondary. */
  readonly maxRecordBytes: number;
  readonly clock: Clock;
  readonly quarantine: (sink: string, batch: SourceBatch, note: QuarantineNote) => void;
  readonly recordEmpty: (sink: SinkId, span: OffsetSpan) => void;
  /** See `planRecovery`: the lowest offset a live lane may still deliver itself. */
  readonly liveFloor: (sink: SinkId, partition: SourcePartition) => number | null;
  readonly log: (line: string) => void;
}

/**
 * Recovery as a role: plans windows from the durable coverage of every
 * secondary against raw's, claims each (by a lease when several workers
 * share the work; a single worker needs none), replays it from raw through
 * the secondary's own sink, waits for that sink's durable acknowledgements
 * and for the coverage to be written, and only then marks the window done.
 */
export class RecoveryRunner {
  private readonly counts = {
    passes: 0,
    windowsReplayed: 0,
    windowsLost: 0,
    windowsTimedOut: 0,
    windowsFailed: 0,
    recordsReplayed: 0,
    quarantineSkipped: 0,
  };
  private readonly incomplete: string[] = [];
  private last: RecoveryBacklog = {
    unclaimedWindows: 0,
    maxLagRecords: 0,
    lagBySink: {},
    plannedAt: null,
  };

  constructor(private readonly deps: RecoveryDeps) {}

  backlog(): RecoveryBacklog {
    return this.last;
  }

  stats(): RecoveryStats {
    return { ...this.counts, incompleteQuarantineWindows: [...this.incomplete] };
  }

  /** Runs passes until `signal` aborts, pausing between passes that found nothing to do. */
  async run(signal: AbortSignal, untilCaughtUp = false): Promise<void> {
    while (!signal.aborted) {
      let replayed: number;
      try {
        replayed = await this.pass(signal);
      } catch (error) {
        // In `both`, recovery must never stop ingest (it only ever costs lag):
        // a failed pass (lease store, coverage read) is retried after a pause.
        if (this.deps.config.role !== 'both') throw error;
        this.deps.log(`recovery pass failed; the gaps stay for the next pass: ${message(error)}`);
        replayed = 0;
      }
      if (untilCaughtUp && this.last.maxLagRecords === 0) return;
      if (replayed === 0) await sleep(this.deps.config.scanEveryMs, signal);
    }
  }

  /** One pass: plan, then replay every window this worker can claim. Returns windows replayed. */
  async pass(signal: AbortSignal): Promise<number> {
    const { deps } = this;
    this.counts.passes += 1;
    const sinks = [...deps.targets.keys()];
    const rawHeld = await deps.raw.held();
    // The live floors are read before the coverage is written, not after: a
    // span a lane settles in between is no longer pending and not yet
    // covered, and would be replayed beside the live lane (every span, under
    // load). Whatever raw held was offered to the lanes before it was
    // durable: by now it is pending (at or above the floor), or settled with
    // its receipt handed over (written next), or a true gap.
    const floors = new Map<string, number | null>();
    for (const { partition } of rawHeld) {
      for (const sink of sinks)
        floors.set(floorKey(sink, partition), deps.liveFloor(sink, partition));
    }
    // What the ack lanes handed over so far counts: plan from the freshest
    // coverage (not a bare flush: one already running holds an older
    // snapshot; not drain: under live acknowledgements it may never return).
    await deps.recorder.writeHandedOver();
    const plan = await planRecovery(
      deps.coverage,
      rawHeld,
      sinks,
      deps.config.windowRecords,
      (sink, partition) => floors.get(floorKey(sink, partition)) ?? null,
    );
    const unclaimed = await this.unclaimed(plan.windows);
    this.last = {
      unclaimedWindows: unclaimed,
      maxLagRecords: Math.max(0, ...Object.values(plan.lagBySink)),
      lagBySink: plan.lagBySink,
      plannedAt: deps.clock.now(),
    };
    let replayed = 0;
    for (const window of plan.windows) {
      if (signal.aborted) break;
      if (await this.replay(window, signal)) replayed += 1;
    }
    return replayed;
  }

  private async replay(window: RecoveryWindow, signal: AbortSignal): Promise<boolean> {
    const { deps } = this;
    const target = deps.targets.get(window.sink);
    if (target === undefined) return false;
    let keeper: LeaseKeeper | null = null;
    if (deps.leases !== undefined) {
      const lease = await deps.leases.claim(window.key, deps.holder, deps.config.leaseTtlMs);
      if (lease === null) return false;
      keeper = new LeaseKeeper(lease, deps.leases, deps.config, (line) => {
        deps.log(`recovery of ${window.key}: ${line}`);
      });
    }
    try {
      return await this.replayClaimed(window, target, signal, keeper);
    } finally {
      // Never leaves a renewal timer behind, whatever failed.
      await keeper?.stop();
    }
  }

  private async replayClaimed(
    window: RecoveryWindow,
    target: ReplayTarget<unknown>,
    signal: AbortSignal,
    keeper: LeaseKeeper | null,
  ): Promise<boolean> {
    const { deps } = this;
    let outcome: ReplayOutcome;
    try {
      outcome = await replayWindow(deps.raw, window, target, {
        signal,
        maxMs: deps.config.windowMaxMs,
        quarantineMode: deps.config.quarantine,
        maxRecordBytes: deps.maxRecordBytes,
        quarantine: deps.quarantine,
        recordEmpty: (span) => {
          deps.recordEmpty(window.sink, span);
        },
        keepLease: async () => keeper === null || !keeper.lost,
        now: () => deps.clock.now(),
      });
    } catch (error) {
      this.counts.windowsFailed += 1;
      deps.log(`recovery of ${window.key} failed; it stays a gap: ${message(error)}`);
      const lease = (await keeper?.stop()) ?? null;
      if (lease !== null) await deps.leases?.release(lease).catch(() => undefined);
      return false;
    }
    this.counts.recordsReplayed += outcome.records;
    this.counts.quarantineSkipped += outcome.quarantineSkipped;
    if (outcome.quarantineSkipped > 0) {
      this.incomplete.push(window.key);
      deps.log(
        `recovery of ${window.key} skipped ${outcome.quarantineSkipped} quarantined records ` +
          '(skip-dlq): the quarantine view of this window is incomplete',
      );
    }
    // Coverage first, then the lease: a window marked done whose coverage was
    // never written would be re-planned anyway (lag), never lost.
    const recorded = await deps.recorder.writeHandedOver();
    // A sink may settle a batch without confirming it (PostgreSQL's
    // `onPoison: 'skip'`). Such a window is not done: completing its key
    // would hide the gap from every leased worker for good, and counting it
    // as progress would replay it again at once, pass after pass.
    const covered = outcome.kind === 'done' && recorded && (await this.covers(window));
    // Renewals stop before the lease is completed or released.
    const lease = (await keeper?.stop()) ?? null;
    if (keeper !== null && lease === null) {
      // Lost (to expiry and another claim): never completed nor released by
      // this worker; its new holder replays it, and what this one wrote is covered.
      this.counts.windowsLost += 1;
      return covered;
    }
    if (covered) {
      this.counts.windowsReplayed += 1;
      if (lease !== null) await this.complete(window, lease);
      return true;
    }
    if (outcome.kind === 'done' && recorded) {
      this.counts.windowsFailed += 1;
      deps.log(
        `recovery of ${window.key}: the sink did not confirm all of it; the rest stays a gap`,
      );
    }
    if (outcome.kind === 'timed-out') this.counts.windowsTimedOut += 1;
    if (lease !== null) await deps.leases?.release(lease);
    return outcome.kind === 'timed-out';
  }

  /**
   * A completed key is never claimed again, so the window's coverage goes to
   * the store's durable tier first: left in a local tier (write-behind) that
   * a lost pod takes with it, the gap would come back under the same key and
   * no leased worker would ever replay it. Released instead if that fails.
   */
  private async complete(window: RecoveryWindow, lease: Lease): Promise<void> {
    const { deps } = this;
    try {
      await deps.coverage.checkpoint();
    } catch (error) {
      deps.log(`recovery of ${window.key}: checkpointing its coverage failed: ${message(error)}`);
      await deps.leases?.release(lease);
      return;
    }
    await deps.leases?.complete(lease);
  }

  /** Whether the secondary's recorded coverage now holds every gap of the window. */
  private async covers(window: RecoveryWindow): Promise<boolean> {
    const covered = await this.deps.coverage.covered({
      sink: window.sink,
      topic: window.topic,
      partition: window.partition,
    });
    return window.gaps.every((g) => covered.covers(g.start, g.end));
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

/**
 * Renews a window's lease on a timer while the window is worked on, not only
 * between batches: a submit held by the sink's backpressure (shared with the
 * live lane) or a long flush would otherwise let the lease expire, and
 * another worker claim it, under a worker still writing.
 */
class LeaseKeeper {
  /** Set once a renewal answered that another worker has the key. */
  lost = false;
  private renewing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private lease: Lease,
    private readonly leases: LeaseStore,
    private readonly config: RecoveryConfig,
    private readonly log: (line: string) => void,
  ) {
    this.timer = setInterval(() => {
      this.renewing = this.renewing.then(() => this.renew());
    }, config.renewEveryMs);
    this.timer.unref();
  }

  /** Stops renewing (idempotent); the lease as last renewed, or null once lost. */
  async stop(): Promise<Lease | null> {
    clearInterval(this.timer);
    await this.renewing;
    return this.lost ? null : this.lease;
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    try {
      const renewed = await this.leases.renew(this.lease, this.config.leaseTtlMs);
      if (renewed === null) this.lost = true;
      else this.lease = renewed;
    } catch (error) {
      // The next tick tries again; the lease may expire meanwhile (then lost).
      this.log(`renewing its lease failed: ${message(error)}`);
    }
  }
}

function floorKey(sink: SinkId, partition: SourcePartition): string {
  return `${sink}\u0000${partitionKey(partition)}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // An abort during the pass has already fired: its listener would never
    // run, and stop() would wait out a whole scan interval.
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
