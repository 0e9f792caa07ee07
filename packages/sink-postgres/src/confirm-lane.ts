import type { ConfirmTarget, SinkId } from '@thalweg/connector-core';
import { PostgresSinkError } from './errors.js';
import type { QueuedBatch } from './queued-batch.js';
import type { SinkCounters } from './sink-stats.js';

/** A batch the writer is done with: committed, or skipped as poison (`committed: null`). */
export interface Settled {
  readonly queued: QueuedBatch;
  readonly committed: { readonly bytes: number; readonly at: number } | null;
}

export interface ConfirmLaneDeps {
  readonly sink: SinkId;
  readonly table: string;
  readonly target: ConfirmTarget<'secondary'>;
  readonly counters: SinkCounters;
  readonly report: (error: PostgresSinkError) => void;
}

/**
 * Where confirmations are applied, after COMMIT, strictly in submission
 * order, while the writer commits the next group. It keeps the settled
 * watermark (every batch below it is confirmed or skipped) that `flush`
 * waits on. This is the only place the sink's coverage or anything else
 * downstream moves, and only for batches that committed.
 */
export class ConfirmLane {
  private settledBelow = 0;
  private tail: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private waiters: {
    readonly upTo: number;
    readonly resolve: () => void;
    readonly reject: (e: Error) => void;
  }[] = [];

  constructor(private readonly deps: ConfirmLaneDeps) {}

  /**
   * Queues the confirmations of a settled group behind those still running.
   * Resolves once the PREVIOUS group's are applied: at most one group waits,
   * so a slow confirmation target slows the writer instead of piling up.
   */
  async handOver(settled: readonly Settled[]): Promise<void> {
    await this.tail;
    this.tail = this.applyInOrder(settled);
  }

  /** Resolves once everything handed over is applied. */
  drained(): Promise<void> {
    return this.tail;
  }

  /** Resolves once every batch with a seq below `upTo` is settled; rejects after `fail`. */
  settled(upTo: number): Promise<void> {
    if (this.settledBelow >= upTo) return Promise.resolve();
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ upTo, resolve, reject }));
  }

  /**
   * Nothing more will settle (the sink failed): waits for what was handed
   * over, then rejects every wait reaching beyond it. Waits it covers resolve.
   */
  async fail(error: Error): Promise<void> {
    await this.tail;
    this.failure = error;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      if (w.upTo <= this.settledBelow) w.resolve();
      else w.reject(error);
    }
  }

  /**
   * A target that throws does not stop the next confirmation: the batch IS
   * committed, only recording it failed, so its coverage lags (a replay
   * later), which is safe; stopping would not make anything lead either.
   */
  private async applyInOrder(settled: readonly Settled[]): Promise<void> {
    for (const { queued, committed } of settled) {
      if (committed !== null) {
        try {
          await this.deps.target.apply(queued.confirm, {
            sink: this.deps.sink,
            span: queued.span,
            durability: 'transaction-commit',
            records: queued.batch.rows.length,
            bytes: committed.bytes,
            submittedAt: queued.submittedAt,
            confirmedAt: committed.at,
          });
        } catch (e) {
          this.deps.counters.confirmFailures.inc();
          this.deps.report(
            new PostgresSinkError(
              'TWG_PG_SINK_CONFIRM_FAILED',
              { table: this.deps.table, span: queued.span },
              `committed, but the confirmation target failed (coverage lags; a replay will repair it): ${e instanceof Error ? e.message : String(e)}`,
              e,
            ),
          );
        }
      }
      this.settledBelow = queued.seq + 1;
      this.wake();
    }
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      if (w.upTo <= this.settledBelow) w.resolve();
      else this.waiters.push(w);
    }
  }
}
