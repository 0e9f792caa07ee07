import { join } from 'node:path';
import type { Confirm, OffsetSpan } from '@thalweg/connector-core';
import type { RecordBatch } from 'apache-arrow';
import { writeSegmentDurably } from './durable-write.js';
import { RawSinkError, reasonOf } from './errors.js';
import type { RawSinkEvent, ResolvedOptions } from './options.js';
import { encodeSegment } from './segment-codec.js';
import type { SegmentIndex } from './segment-index.js';
import { segmentName } from './segment-name.js';
import { SubmitQueue } from './submit-queue.js';

/** A batch accepted by `submit`, waiting for its segment to become durable. */
export interface Accepted {
  readonly span: OffsetSpan;
  readonly envelope: RecordBatch;
  readonly confirm: Confirm<'primary-raw'>;
  readonly records: number;
  /** Buffer bytes of the envelope: the queue and segment bounds count these. */
  readonly bytes: number;
  /** Key, value and header bytes as the source delivered them: the receipt's `bytes`. */
  readonly payloadBytes: number;
  readonly submittedAt: number;
}

/** What the lane has written since open. */
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
 * The writer behind `submit`: the one place raw's confirmations are applied,
 * and only after the durable write. It takes everything queued (up to the
 * segment bounds) as one burst, makes it one durable segment, adds it to the
 * index, then applies each batch's confirmation in submission order.
 *
 * A write that fails through its retries ends the lane: the burst and
 * everything queued behind it stay unconfirmed (the source redelivers them
 * to a reopened sink), and every waiting push and flush rejects with the
 * error. A confirmation target that throws does not end it.
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
  private readonly queue: SubmitQueue<Accepted>;
  private readonly done: Promise<void>;
  private failure: Error | null = null;
  /** Batches whose confirmation was applied (or failed to apply) since open. */
  private confirmed = 0;
  private flushWaiters: { target: number; resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(
    private readonly o: ResolvedOptions,
    private readonly index: SegmentIndex,
    private nextSequence: number,
  ) {
    this.queue = new SubmitQueue(o.maxQueuedBatches, o.maxQueuedBytes);
    // A bug in the lane must fail the sink loudly, not leave flushes hanging.
    this.done = this.run().catch((error: unknown) => {
      this.fail(
        new RawSinkError(
          'TWG_RAW_WRITE_FAILED',
          `the writer stopped: ${reasonOf(error)}`,
          {},
          error,
        ),
      );
    });
  }

  /** Queues a batch; waits while the queue is full (the backpressure). */
  accept(item: Accepted): Promise<void> {
    return this.queue.push(item);
  }

  /** Resolves once every batch accepted before the call is confirmed; rejects once failed. */
  flush(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const target = this.queue.admitted;
    if (this.confirmed >= target) return Promise.resolve();
    return new Promise((resolve, reject) => this.flushWaiters.push({ target, resolve, reject }));
  }

  /** Lets the lane finish what is queued and stop. */
  async end(): Promise<void> {
    this.queue.end();
    await this.done;
  }

  get failed(): Error | null {
    return this.failure;
  }

  get queued(): { readonly items: number; readonly bytes: number } {
    return this.queue.size;
  }

  private async run(): Promise<void> {
    for (;;) {
      const burst = await this.queue.take(this.o.maxBatchesPerSegment, this.o.maxSegmentBytes);
      if (burst === null) return;
      const sequence = this.nextSequence++;
      const name = segmentName(sequence);
      let bytes: Uint8Array;
      try {
        bytes = await this.write(burst, sequence, name);
      } catch (error) {
        this.fail(
          error instanceof RawSinkError
            ? error
            : new RawSinkError(
                'TWG_RAW_WRITE_FAILED',
                reasonOf(error),
                { file: join(this.o.dir, name) },
                error,
              ),
        );
        return;
      }
      // Durable from here on: index it (reads may see it), then confirm in order.
      this.index.add(
        name,
        sequence,
        bytes.byteLength,
        burst.map((a) => ({ span: a.span, records: a.records })),
      );
      const c = this.counts;
      c.segmentsWritten++;
      c.bytesWritten += bytes.byteLength;
      c.batchesWritten += burst.length;
      c.recordsWritten += burst.reduce((n, a) => n + a.records, 0);
      c.maxBatchesPerBurst = Math.max(c.maxBatchesPerBurst, burst.length);
      await this.confirm(burst);
    }
  }

  private async write(burst: readonly Accepted[], sequence: number, name: string) {
    const bytes = encodeSegment(
      this.o.cluster,
      burst.map((a) => ({ span: a.span, batch: a.envelope })),
    );
    await writeSegmentDurably(
      {
        fs: this.o.fs,
        dir: this.o.dir,
        retry: this.o.retry,
        onRetry: (file, attempt, error) => {
          this.counts.writeRetries++;
          this.report({ kind: 'write-retry', file, attempt, error });
        },
      },
      sequence,
      name,
      bytes,
    );
    return bytes;
  }

  private async confirm(burst: readonly Accepted[]): Promise<void> {
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

  private fail(error: Error): void {
    this.failure = error;
    this.queue.fail(error);
    for (const w of this.flushWaiters.splice(0)) w.reject(error);
    this.report({ kind: 'failed', error });
  }

  private report(event: RawSinkEvent): void {
    try {
      this.o.onError(event);
    } catch {
      // A throwing observer (a logger) must not end the lane; the counters stand.
    }
  }
}
