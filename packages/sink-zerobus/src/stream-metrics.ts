import { Counter, DeliveryMetrics } from '@thalweg/connector-core';

/**
 * The metrics of one stream, labelled {table, stream}: its ack lanes'
 * (coalesce ratio, pending, delivery latency, retries, poisoned, confirm
 * failures, kept across the lanes of its successive incarnations), its
 * rebuilds and what it accepted and delivered. Each stream owns its instance: no counter, gauge or label is
 * shared between streams or lanes, so a stalled secondary cannot hide in
 * (or distort) raw's numbers.
 */
export class StreamMetrics extends DeliveryMetrics {
  /** Streams opened to replace a poisoned one. */
  readonly rebuilds = new Counter();
  /** Batches the transport accepted (once each: a replay after a rebuild is not counted again). */
  readonly submittedBatches = new Counter();
  /** Records of the accepted batches. */
  readonly submittedRecords = new Counter();
  /** Batches durably acknowledged and confirmed (once each). */
  readonly deliveredBatches = new Counter();
  /** Records of the delivered batches. */
  readonly deliveredRecords = new Counter();

  constructor(readonly labels: { readonly table: string; readonly stream: string }) {
    super();
  }
}
