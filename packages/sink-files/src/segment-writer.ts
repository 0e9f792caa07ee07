import type { Confirm, DeliveryPressure, LaneMetrics, SourceBatch } from '@thalweg/connector-core';
import type { LaneCounts } from './raw-lane.js';

/**
 * What the sink drives: a writer that takes checked batches, makes them
 * durable segments (group commit) and has the ack lane confirm them in
 * order. Two implementations: `InlineWriter` (everything on the calling
 * thread, through the injectable `SegmentFs`) and `WorkerWriter` (packing on
 * the calling thread, encoding and writing on a worker thread).
 */
export interface SegmentWriter {
  /**
   * Checks and packs the batch, then queues it: resolves once ACCEPTED, not
   * durable. Waits while the queue is full; admits in call order.
   */
  submit(batch: SourceBatch, confirm: Confirm<'primary-raw'>): Promise<void>;
  /** Resolves once every batch accepted before the call is confirmed; rejects once failed. */
  flush(): Promise<void>;
  /** Stops the writer: after a flush, once what it holds is written; at once when failed. */
  end(): Promise<void>;
  readonly failed: Error | null;
  /** Accepted and not yet durable (inline: not yet taken by the writer). */
  readonly queued: { readonly items: number; readonly bytes: number };
  readonly counts: LaneCounts;
  /** The lane's fill and failing writes now (raw-lane.ts). */
  pressure(): DeliveryPressure;
  /** The one ack lane's metrics (raw-lane.ts). */
  lanes(): readonly LaneMetrics[];
}
