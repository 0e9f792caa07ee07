import type {
  Clock,
  OffsetSpan,
  Scheduler,
  ReplayableSink,
  SinkId,
  SourceBatch,
  SourcePartition,
} from '@thalweg/connector-core';
import { pause, ThalwegError } from '@thalweg/connector-core';
import type { CoverageStore, CoveredRange, Lease, LeaseStore } from '@thalweg/offset-store';
import type { QuarantineNote } from '../topology.js';
import type { BacklogMeter } from './backlog-meter.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { RecoveryWindow } from './recovery-window.js';
import type { RecoveryConfig } from './recovery-config.js';
import { replayWindow, type ReplayOutcome, type ReplayTarget } from './replay-window.js';

export interface RecoveryStats {
  readonly passes: number;
  readonly windowsReplayed: number;
  readonly windowsLost: number;
  readonly windowsTimedOut: number;
  readonly windowsFailed: number;
  /**
   * Windows cut down (or dropped) when their turn came: since the plan, the
   * live lane delivered part of them, or live ingest will offer it itself.
   */
  readonly windowsTrimmed: number;
  /**
   * Windows raw did not give back whole when replayed (its reads trail its
   * acknowledgements: a lakehouse table's metadata not generated yet): not
   * completed, planned again at the next pass.
   */
  readonly windowsUnread: number;
  readonly recordsReplayed: number;
  /** Completed lease keys forgotten (`clearCompleted`): what the lease store no longer grows by. */
  readonly leasesCleared: number;
  /** Quarantined records not re-sent under `skip-dlq`: the quarantine view of those windows is incomplete. */
  readonly quarantineSkipped: number;
  readonly incompleteQuarantineWindows: readonly string[];
}

export interface RecoveryDeps {
  readonly raw: ReplayableSink<SourceBatch>;
  readonly coverage: CoverageStore;
  readonly targets: ReadonlyMap<SinkId, ReplayTarget<unknown>>;
  /** Writes what `sink`'s lane handed over (its own recorder); false if that write failed. */
  readonly writeHandedOver: (sink: SinkId) => Promise<boolean>;
  /** Plans each pass and keeps the backlog it measured. */
  readonly meter: BacklogMeter;
  readonly leases: LeaseStore | undefined;
  readonly holder: string;
  readonly config: RecoveryConfig;
  /** The pipeline's `maxRecordBytes`: larger records never reach a secondary. */
  readonly maxRecordBytes: number;
  /** Content dedup, the live path's own (ADR 0036); absent when no stream has it on. */
  readonly dedup?: (batch: SourceBatch) => Promise<SourceBatch>;
  readonly clock: Clock;
  /** Where the pause between passes and the lease renewals run. */
  readonly scheduler: Scheduler;
  /**
   * Quarantines a record of a window of `lane` (the entry names `sink`: the
   * secondary's own, or raw's for a record too large for any secondary).
   */
  readonly quarantine: (
    lane: SinkId,
    sink: string,
    batch: SourceBatch,
    note: QuarantineNote,
  ) => void;
  readonly recordEmpty: (sink: SinkId, span: OffsetSpan) => void;
  /** See `planRecovery`: the lowest offset a live lane may still deliver itself. */
  readonly liveFloor: (sink: SinkId, partition: SourcePartition) => number | null;
  /**
   * Tells the window's live lane that recovery replays its gaps now, so it
   * does not offer them too (ADR 0030); returns the release, called once
   * the replay settled and its coverage was written.
   */
  readonly claim: (window: RecoveryWindow) => () => void;
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
    windowsTrimmed: 0,
    windowsUnread: 0,
    recordsReplayed: 0,
    leasesCleared: 0,
    quarantineSkipped: 0,
  };
  private readonly incomplete: string[] = [];
  private waking = new AbortController();

  constructor(private readonly deps: RecoveryDeps) {}

  stats(): RecoveryStats {
    return { ...this.counts, incompleteQuarantineWindows: [...this.incomplete] };
  }

  /**
   * Runs passes until `signal` aborts, pausing between passes that found
   * nothing to do. With `caughtUpEnds`, also ends after a pass that found no
   * secondary behind raw, if `caughtUpEnds()` was true when it began: in the
   * `both` role, a pass planned while ingest still makes gaps (the first one,
   * before anything was read) must not end recovery.
   */
  async run(signal: AbortSignal, caughtUpEnds: () => boolean = () => false): Promise<void> {
    while (!signal.aborted) {
      const ends = caughtUpEnds();
      let replayed: number;
      try {
        replayed = await this.pass(signal);
      } catch (error) {
        // In `both`, recovery must never stop ingest (it only ever costs lag):
        // a failed pass (lease store, coverage read) is retried after a pause.
        // A raw that may no longer be read back (verifyReadable) stops it loudly.
        if (this.deps.config.role !== 'both' || isFatalConfig(error)) throw error;
        this.deps.log(`recovery pass failed; the gaps stay for the next pass: ${message(error)}`);
        replayed = 0;
      }
      if (ends && this.deps.meter.current().maxLagRecords === 0) return;
      if (replayed === 0) {
        await pause(this.deps.scheduler, this.deps.config.scanEveryMs, signal, this.waking.signal);
      }
      if (this.waking.signal.aborted) this.waking = new AbortController();
    }
  }

  /** Cuts the pause between passes short: something changed (ingest ended). */
  wake(): void {
    this.waking.abort();
  }

  /** One pass: plan, then replay every window this worker can claim. Returns windows replayed. */
  async pass(signal: AbortSignal): Promise<number> {
    const { deps } = this;
    this.counts.passes += 1;
    // Before anything is planned from raw: its read path may have gone (a table property flipped).
    await deps.raw.verifyReadable?.();
    await this.clearCompleted();
    const plan = await deps.meter.sample(deps.liveFloor);
    let replayed = 0;
    for (const window of plan.windows) {
      if (signal.aborted) break;
      if (await this.replay(window, signal)) replayed += 1;
    }
    return replayed;
  }

  private async replay(planned: RecoveryWindow, signal: AbortSignal): Promise<boolean> {
    const { deps } = this;
    const target = deps.targets.get(planned.sink);
    if (target === undefined) return false;
    let lease: Lease | null = null;
    if (deps.leases !== undefined) {
      lease = await deps.leases.claim(planned.key, deps.holder, deps.config.leaseTtlMs);
      if (lease === null) return false;
      // Planned before another worker finished this window and its key was
      // cleared (see clearCompleted): done already, nothing to replay.
      if (await this.covers(planned)) {
        await this.complete(planned, lease);
        return false;
      }
    }
    const window = await this.stillMissing(planned);
    if (window !== planned) this.counts.windowsTrimmed += 1;
    if (window === null || (window !== planned && lease !== null)) {
      // Nothing of it is left to replay, or a leased key no longer names
      // what is missing: the next pass plans afresh.
      if (lease !== null) {
        if (await this.covers(planned)) await this.complete(planned, lease);
        else await deps.leases?.release(lease);
      }
      return false;
    }
    const keeper =
      lease === null || deps.leases === undefined
        ? null
        : new LeaseKeeper(lease, deps.leases, deps.config, deps.scheduler, (line) => {
            deps.log(`recovery of ${window.key}: ${line}`);
          });
    const release = deps.claim(window);
    try {
      return await this.replayClaimed(window, target, signal, keeper);
    } finally {
      // What the replay covered is in the lane's covered spans by now (its
      // coverage was written); what it did not is a gap for the next pass.
      release();
      // Never leaves a renewal timer behind, whatever failed.
      await keeper?.stop();
    }
  }

  /**
   * The window as it stands now, not as planned: windows replay one after
   * another, and meanwhile the live lane may have delivered part of one, or
   * live ingest may have learnt where a partition resumes (ADR 0030). The
   * live floor is read before the coverage, as in planning. Returns the
   * window itself when nothing changed, and null when nothing is left.
   */
  private async stillMissing(window: RecoveryWindow): Promise<RecoveryWindow | null> {
    const { deps } = this;
    const partition = { topic: window.topic, partition: window.partition };
    const floor = deps.liveFloor(window.sink, partition) ?? Number.POSITIVE_INFINITY;
    await deps.writeHandedOver(window.sink);
    const key = { sink: window.sink, ...partition };
    const gaps: CoveredRange[] = [];
    for (const g of window.gaps) {
      if (g.start >= floor) break;
      gaps.push(...(await deps.coverage.gaps(key, g.start, Math.min(g.end, floor))));
    }
    if (gaps.length === 0) return null;
    const same =
      gaps.length === window.gaps.length &&
      gaps.every((g, i) => {
        const was = window.gaps[i];
        return was !== undefined && g.start === was.start && g.end === was.end;
      });
    if (same) return window;
    return { ...window, gaps, records: gaps.reduce((n, g) => n + g.end - g.start, 0) };
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
        ...(deps.dedup === undefined ? {} : { dedup: deps.dedup }),
        quarantine: (sink, batch, note) => {
          deps.quarantine(window.sink, sink, batch, note);
        },
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
    const recorded = await deps.writeHandedOver(window.sink);
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
    if (outcome.kind === 'done' && outcome.unread > 0) {
      this.counts.windowsUnread += 1;
      deps.log(
        `recovery of ${window.key}: raw gave back ${window.records - outcome.unread} of its ${window.records} offsets ` +
          '(its reads trail what it acknowledged); the window is planned again at the next pass',
      );
    } else if (outcome.kind === 'done' && recorded) {
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
    const leases = deps.leases;
    if (leases === undefined || !(await leases.complete(lease))) return;
    // Forgotten at once (see clearCompleted for why that is sound), or the
    // store would hold every window of a pass until the next one begins. The
    // key as a prefix may also name a longer completed key: as safe to forget.
    try {
      this.counts.leasesCleared += await leases.clearCompleted(window.key);
    } catch (error) {
      deps.log(`recovery of ${window.key}: clearing its completed lease failed: ${message(error)}`);
    }
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

  /**
   * Forgets the completed keys of this worker's secondaries, before planning
   * (each is also forgotten as soon as its window completes; this catches
   * what another worker, or a crash or a failure between the two, left). A
   * key is completed only once its window's coverage is in the durable tier,
   * and it ends with the window's first missing offset, which is then
   * covered for good: no plan made from now on names that key again. A plan
   * made before (another worker's, mid-pass) may still claim it once it is
   * free; `replay` finds it covered and completes it without replaying.
   */
  private async clearCompleted(): Promise<void> {
    const leases = this.deps.leases;
    if (leases === undefined) return;
    for (const sink of this.deps.targets.keys()) {
      // Sink ids cannot hold '/': the prefix names this sink's keys only.
      this.counts.leasesCleared += await leases.clearCompleted(`${sink}/`);
    }
  }
}

function isFatalConfig(error: unknown): boolean {
  return error instanceof ThalwegError && error.errorClass === 'fatal-config';
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
