import {
  AckLane,
  type Confirm,
  type DeliveryMetrics,
  type DeliveryPressure,
  type LaneMetrics,
  type Pending,
} from '@thalweg/connector-core';
import type { RawSinkEvent, ResolvedOptions } from './options.js';
import type { PackedBatch } from './packed-batch.js';
import type { SegmentIndex } from './segment-index.js';
import type { SegmentLayout } from './segment-layout.js';

/** Raw's segments go through one lane: its stream in telemetry. */
const RAW_STREAM = '0';

/**
 * A batch accepted by `submit`, waiting for its segment to become durable.
 * Its position is its admission order; it costs the lane its packed bytes,
 * and its receipt carries the bytes as the source delivered them.
 */
export interface Accepted extends Pending<number, 'primary-raw'> {
  readonly packed: PackedBatch;
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
 * Raw's use of the delivery layer's ack lane, the same for either writer:
 * the lane is bounded by `maxQueuedBatches`/`maxQueuedBytes`, takes one
 * segment's worth (`maxBatchesPerSegment`/`maxSegmentBytes`) per burst, or
 * a few for the worker writer, and confirms with durability `flush-close`.
 * A writer's durable step makes the burst durable segments and calls
 * `indexed` for each before any of its batches settles: reads see a
 * segment before its batches are confirmed, never after.
 */
export class RawLane {
  readonly lane: AckLane<number, 'primary-raw', Accepted>;
  private readonly written = {
    segmentsWritten: 0,
    bytesWritten: 0,
    batchesWritten: 0,
    recordsWritten: 0,
    maxBatchesPerBurst: 0,
  };
  private nextPosition = 0;
  private failureReported = false;

  /**
   * `countUntil`: the inline writer's batches leave the bound when it takes
   * them (its burst is the segment it writes); the worker writer's stay in
   * it until durable, since the thread holds their buffers until then.
   * `segmentsPerBurst`: how many segments' worth one burst may grow to; the
   * inline writer writes one segment per burst, the worker writer keeps its
   * thread fed across several (worker-writer.ts).
   */
  constructor(
    private readonly o: ResolvedOptions,
    private readonly index: SegmentIndex,
    countUntil: 'taken' | 'released',
    segmentsPerBurst = 1,
  ) {
    this.lane = new AckLane({
      sink: o.id,
      stream: RAW_STREAM,
      durability: 'flush-close',
      target: o.confirm,
      queue: { maxItems: o.maxQueuedBatches, maxBytes: o.maxQueuedBytes, countUntil },
      burst: {
        maxItems: o.maxBatchesPerSegment * segmentsPerBurst,
        maxBytes: o.maxSegmentBytes * segmentsPerBurst,
      },
      // The batch IS durable; only acting on it failed, so the position lags
      // (a replay later, absorbed by the record id). The lane carries on.
      onConfirmFailure: (error, a) => this.report({ kind: 'confirm-failed', span: a.span, error }),
    });
  }

  /** Queues a packed batch; resolves once accepted (waits while the lane is full). */
  submit(
    packed: PackedBatch,
    payloadBytes: number,
    confirm: Confirm<'primary-raw'>,
  ): Promise<void> {
    return this.lane.submit({
      position: this.nextPosition++,
      span: packed.span,
      confirm,
      records: packed.count,
      bytes: packed.bytes,
      receiptBytes: payloadBytes,
      submittedAt: Date.now(),
      packed,
    });
  }

  /**
   * The segment `file` holding `part` is durable (written, fsynced, renamed,
   * its directory fsynced, its manifest line fsynced): index it, so reads
   * see it. Never call this earlier.
   */
  indexed(file: string, sequence: number, layout: SegmentLayout, part: readonly Accepted[]): void {
    this.index.add(
      file,
      sequence,
      layout,
      part.map((a) => ({ span: a.span, records: a.records })),
    );
    const c = this.written;
    c.segmentsWritten++;
    c.bytesWritten += layout.bytes;
    c.batchesWritten += part.length;
    for (const a of part) c.recordsWritten += a.records;
    c.maxBatchesPerBurst = Math.max(c.maxBatchesPerBurst, part.length);
    this.metrics.consecutiveFailures.set(0);
  }

  /** A segment write failed and will be retried. */
  retried(file: string, attempt: number, error: unknown): void {
    this.metrics.retries.inc();
    this.metrics.consecutiveFailures.set(this.metrics.consecutiveFailures.value + 1);
    this.report({ kind: 'write-retry', file, attempt, error });
  }

  /** Ends the lane: every waiting submit and flush rejects with `error`. The first failure stands. */
  async fail(error: Error): Promise<void> {
    if (!this.failureReported) {
      this.failureReported = true;
      this.report({ kind: 'failed', error });
    }
    await this.lane.fail(error);
  }

  /** The lane's fill and its segment writes failing in a row, for flow control. */
  pressure(): DeliveryPressure {
    return {
      queueFill: this.lane.fill(),
      consecutiveFailures: this.metrics.consecutiveFailures.value,
    };
  }

  /** The sink's one lane, stream `0`, for telemetry: its live metrics. */
  lanes(): readonly LaneMetrics[] {
    return [{ stream: RAW_STREAM, metrics: this.metrics }];
  }

  get metrics(): DeliveryMetrics {
    return this.lane.metrics;
  }

  get counts(): LaneCounts {
    return {
      ...this.written,
      writeRetries: this.metrics.retries.value,
      confirmFailures: this.metrics.confirmFailures.value,
    };
  }

  private report(event: RawSinkEvent): void {
    try {
      this.o.onError(event);
    } catch {
      // A throwing observer (a logger) must not end the lane; the counters stand.
    }
  }
}
