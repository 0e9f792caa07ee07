import type { Confirm, OffsetSpan } from '@thalweg/connector-core';
import type { RawSinkEvent, ResolvedOptions } from './options.js';
import type { SegmentIndex } from './segment-index.js';
import type { SegmentLayout } from './segment-layout.js';

/** A batch accepted by `submit`, waiting for its segment to become durable. */
export interface Accepted {
  readonly span: OffsetSpan;
  readonly confirm: Confirm<'primary-raw'>;
  readonly records: number;
  /** Bytes of the packed batch: the queue and segment bounds count these. */
  readonly bytes: number;
  /** Key, value and header bytes as the source delivered them: the receipt's `bytes`. */
  readonly payloadBytes: number;
  readonly submittedAt: number;
}

/** What the writer has done since open. */
export interface LaneCounts {
  segmentsWritten: number;
  bytesWritten: number;
  batchesWritten: number;
  recordsWritten: number;
  maxBatchesPerBurst: number;
  writeRetries: number;
  confirmFailures: number;
}

/**
 * The one place raw's confirmations are applied, whichever thread wrote the
 * segment, and only once it is durable: the writer reports each durable
 * segment with the batches it holds (in submission order), and the lane
 * adds it to the index, then applies each batch's confirmation in order.
 * Flushes wait here for a count of confirmed batches.
 *
 * A confirmation target that throws does not stop the lane: the batch is
 * durable, only acting on it failed.
 */
export class AckLane {
  readonly counts: LaneCounts = {
    segmentsWritten: 0,
    bytesWritten: 0,
    batchesWritten: 0,
    recordsWritten: 0,
    maxBatchesPerBurst: 0,
    writeRetries: 0,
    confirmFailures: 0,
  };
  private failure: Error | null = null;
  /** Batches whose confirmation was applied (or failed to apply) since open. */
  private confirmed = 0;
  private flushWaiters: { target: number; resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(
    private readonly o: ResolvedOptions,
    private readonly index: SegmentIndex,
  ) {}

  /**
   * The segment `file` holding `burst` is durable (written, fsynced, renamed,
   * its directory fsynced, its manifest line fsynced): index it, so reads see it, then confirm each
   * batch in submission order. Never call this earlier.
   */
  async durable(
    file: string,
    sequence: number,
    layout: SegmentLayout,
    burst: readonly Accepted[],
  ): Promise<void> {
    const bytes = layout.bytes;
    this.index.add(
      file,
      sequence,
      layout,
      burst.map((a) => ({ span: a.span, records: a.records })),
    );
    const c = this.counts;
    c.segmentsWritten++;
    c.bytesWritten += bytes;
    c.batchesWritten += burst.length;
    for (const a of burst) c.recordsWritten += a.records;
    c.maxBatchesPerBurst = Math.max(c.maxBatchesPerBurst, burst.length);
    const confirmedAt = Date.now();
    for (const accepted of burst) {
      try {
        await this.o.confirm.apply(accepted.confirm, {
          sink: this.o.id,
          span: accepted.span,
          durability: 'flush-close',
          records: accepted.records,
          bytes: accepted.payloadBytes,
          submittedAt: accepted.submittedAt,
          confirmedAt,
        });
      } catch (error) {
        // The batch IS durable; only acting on it failed, so the position
        // lags (a replay later, absorbed by the record id). Stopping the lane
        // would not make it lead either: carry on, in order.
        this.counts.confirmFailures++;
        this.report({ kind: 'confirm-failed', span: accepted.span, error });
      }
      this.confirmed++;
    }
    const waiting = this.flushWaiters;
    this.flushWaiters = waiting.filter((w) => w.target > this.confirmed);
    for (const w of waiting) if (w.target <= this.confirmed) w.resolve();
  }

  /** Resolves once `admitted` batches are confirmed; rejects once failed. */
  flush(admitted: number): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.confirmed >= admitted) return Promise.resolve();
    return new Promise((resolve, reject) =>
      this.flushWaiters.push({ target: admitted, resolve, reject }),
    );
  }

  /** A segment write failed and will be retried. */
  retried(file: string, attempt: number, error: unknown): void {
    this.counts.writeRetries++;
    this.report({ kind: 'write-retry', file, attempt, error });
  }

  /** Ends the lane: every waiting flush rejects with `error`. The first failure stands. */
  fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    for (const w of this.flushWaiters.splice(0)) w.reject(error);
    this.report({ kind: 'failed', error });
  }

  get failed(): Error | null {
    return this.failure;
  }

  private report(event: RawSinkEvent): void {
    try {
      this.o.onError(event);
    } catch {
      // A throwing observer (a logger) must not end the lane; the counters stand.
    }
  }
}
