import type {
  Clock,
  OffsetSpan,
  ReplayableSink,
  SinkId,
  SourceBatch,
  SourcePartition,
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
      const replayed = await this.pass(signal);
      if (untilCaughtUp && this.last.maxLagRecords === 0) return;
      if (replayed === 0) await sleep(this.deps.config.scanEveryMs, signal);
    }
  }

  /** One pass: plan, then replay every window this worker can claim. Returns windows replayed. */
  async pass(signal: AbortSignal): Promise<number> {
    const { deps } = this;
    this.counts.passes += 1;
    // What the ack lanes handed over so far counts: plan from the freshest
    // coverage (drain, not flush: a flush already running holds an older snapshot).
    await deps.recorder.drain();
    const plan = await planRecovery(
      deps.coverage,
      await deps.raw.held(),
      [...deps.targets.keys()],
      deps.config.windowRecords,
      deps.liveFloor,
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
    let lease: Lease | null = null;
    if (deps.leases !== undefined) {
      lease = await deps.leases.claim(window.key, deps.holder, deps.config.leaseTtlMs);
      if (lease === null) return false;
    }
    let renewedAt = deps.clock.now();
    const keepLease = async (): Promise<boolean> => {
      if (lease === null || deps.leases === undefined) return true;
      if (deps.clock.now() - renewedAt < deps.config.renewEveryMs) return true;
      lease = await deps.leases.renew(lease, deps.config.leaseTtlMs);
      renewedAt = deps.clock.now();
      return lease !== null;
    };
    let outcome: ReplayOutcome;
    try {
      outcome = await replayWindow(deps.raw, window, target, {
        signal,
        maxMs: deps.config.windowMaxMs,
        quarantineMode: deps.config.quarantine,
        quarantine: deps.quarantine,
        recordEmpty: (span) => {
          deps.recordEmpty(window.sink, span);
        },
        keepLease,
        now: () => deps.clock.now(),
      });
    } catch (error) {
      this.counts.windowsFailed += 1;
      deps.log(`recovery of ${window.key} failed; it stays a gap: ${message(error)}`);
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
    const recorded = await deps.recorder.drain();
    if (outcome.kind === 'done' && recorded) {
      this.counts.windowsReplayed += 1;
      if (lease !== null) await deps.leases?.complete(lease);
      return true;
    }
    if (outcome.kind === 'lease-lost') this.counts.windowsLost += 1;
    if (outcome.kind === 'timed-out') this.counts.windowsTimedOut += 1;
    if (lease !== null && outcome.kind !== 'lease-lost') await deps.leases?.release(lease);
    return outcome.kind === 'timed-out';
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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
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
