import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import { checkWindow, type CoveredRange } from './covered-range.js';
import type {
  CoverageDelta,
  CoverageKey,
  CoverageStore,
  CoverageTier,
  CursorKey,
  DurableReceipt,
} from './coverage-store.js';
import { laterCursor } from './cursor-check.js';
import { CoverageError } from './errors.js';
import type { LevelDbCoverage } from './leveldb/leveldb-coverage.js';
import { parseWriteBehindOptions } from './write-behind-options.js';
import type { LocalDiagnostics } from './leveldb/leveldb-tier.js';
import { RangeSet } from './range-set.js';
import { coverageKeyId } from './receipt-check.js';

export interface WriteBehindOptions {
  readonly local: LevelDbCoverage;
  readonly durable: CoverageTier;
  /** How often the local tier is checkpointed: the replay a lost pod costs. */
  readonly checkpointIntervalMs: number;
  /** Wall clock in ms; injectable for tests. */
  readonly now?: () => number;
  /** Called when a periodic checkpoint fails; the next one retries everything still unflushed. */
  readonly onCheckpointError?: (error: unknown) => void;
}

export interface WriteBehindDiagnostics extends LocalDiagnostics {
  readonly msSinceCheckpoint: number | null;
  readonly lastCheckpointError: string | null;
}

/**
 * The local tier in front of a durable tier. Coverage is recorded locally
 * (cheap, inspectable) and checkpointed to the durable tier on an interval
 * and at close. Losing the pod costs at most one interval of replay: what it
 * had not checkpointed is missing from the durable tier (lag), never claimed
 * without having been written (lead). Reads union both tiers — every range in
 * either was recorded from a durable acknowledgement.
 *
 * A new owner after a rebalance builds its own WriteBehindCoverage: its local
 * tier knows nothing of the partition, so it sees exactly the durable tier.
 */
export class WriteBehindCoverage implements CoverageStore {
  private readonly options: WriteBehindOptions;
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;
  private running: Promise<void> | null = null;
  private lastError: string | null = null;
  private closed = false;

  constructor(input: WriteBehindOptions) {
    const options = parseWriteBehindOptions(input);
    this.options = options;
    // From here on the LevelDB store logs what the durable tier lacks.
    options.local.serveAsLocalTier();
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => {
      this.checkpoint().catch((e: unknown) => options.onCheckpointError?.(e));
    }, options.checkpointIntervalMs);
    this.timer.unref();
  }

  recordDurable(receipts: readonly DurableReceipt[]): Promise<void> {
    return this.options.local.recordDurable(receipts);
  }

  merge(deltas: readonly CoverageDelta[]): Promise<void> {
    return this.options.local.merge(deltas);
  }

  async covered(key: CoverageKey): Promise<RangeSet> {
    const [local, durable] = await Promise.all([
      this.options.local.covered(key),
      this.options.durable.covered(key),
    ]);
    return RangeSet.union(local, durable);
  }

  async gaps(key: CoverageKey, from: number, to: number): Promise<CoveredRange[]> {
    checkWindow(from, to, 'gaps');
    return (await this.covered(key)).gaps(from, to);
  }

  /** Both tiers must know the sink: the checkpoint of what the local one records merges into the durable one. */
  knows(sink: SinkId): boolean {
    return this.options.local.knows(sink) && this.options.durable.knows(sink);
  }

  async destinations(): Promise<CoverageKey[]> {
    const all = [
      ...(await this.options.local.destinations()),
      ...(await this.options.durable.destinations()),
    ];
    return [...new Map(all.map((k) => [coverageKeyId(k), k])).values()];
  }

  saveCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    return this.options.local.saveCursor(key, cursor);
  }

  /**
   * Rewinds both tiers, queued with the checkpoints: it first checkpoints, so
   * the durable tier holds the latest cursor (the one the rewind is checked
   * against) and no checkpoint that read the local log before the rewind can
   * write its older, later cursor after it. Then the durable tier, then the
   * local one, whose rewind drops the key's unflushed log entries. A failure
   * part-way leaves a cursor no lower than before; repeating the rewind
   * completes it (a rewind to the stored position is allowed).
   */
  rewindCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    return this.queued(async () => {
      await this.checkpointOnce();
      await this.options.durable.rewindCursor(key, cursor);
      const local = await this.options.local.loadCursor(key);
      // A local cursor below the rewind loses to the durable one on load.
      if (local !== null && local.nextOffset >= cursor.nextOffset)
        await this.options.local.rewindCursor(key, cursor);
    });
  }

  async loadCursor(key: CursorKey): Promise<SourceCursor | null> {
    const [local, durable] = await Promise.all([
      this.options.local.loadCursor(key),
      this.options.durable.loadCursor(key),
    ]);
    if (local === null) return durable;
    return laterCursor(durable, local);
  }

  /** Pushes everything the local tier holds beyond the last checkpoint to the durable tier. */
  checkpoint(): Promise<void> {
    return this.queued(() => this.checkpointOnce());
  }

  async diagnostics(): Promise<WriteBehindDiagnostics> {
    const local = await this.options.local.diagnostics();
    return {
      ...local,
      msSinceCheckpoint:
        local.lastCheckpointAt === null ? null : this.now() - local.lastCheckpointAt,
      lastCheckpointError: this.lastError,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.timer);
    try {
      await this.checkpoint();
    } finally {
      this.closed = true;
      await this.options.local.close();
      await this.options.durable.close();
    }
  }

  /** One checkpoint or rewind at a time; a caller arriving during one waits for it and runs its own. */
  private queued(work: () => Promise<void>): Promise<void> {
    if (this.closed)
      return Promise.reject(
        new CoverageError('TWG_COVERAGE_CLOSED', 'the coverage store is closed'),
      );
    const previous = this.running ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(work);
    this.running = run;
    return run;
  }

  private async checkpointOnce(): Promise<void> {
    const pending = await this.options.local.unflushed();
    if (pending.throughSeq < 0) return;
    try {
      // Durable first, then forget locally: a crash in between re-sends
      // ranges the durable tier already has, which the union absorbs.
      if (pending.deltas.length > 0) await this.options.durable.merge(pending.deltas);
      for (const c of pending.cursors) await this.options.durable.saveCursor(c.key, c.cursor);
      await this.options.local.markCheckpointed(pending.throughSeq, this.now());
      this.lastError = null;
    } catch (e) {
      this.lastError = e instanceof Error ? e.message : String(e);
      throw e;
    }
  }
}
