import { Counter, DeliveryMetrics } from '@thalweg/connector-core';

/**
 * The metrics of one stream, labelled {table, stream}: its ack lanes'
 * (coalesce ratio, pending, delivery latency, retries, poisoned, confirm
 * failures, kept across the lanes of its successive incarnations) and its
 * rebuilds. Each stream owns its instance: no counter, gauge or label is
 * shared between streams or lanes, so a stalled secondary cannot hide in
 * (or distort) raw's numbers.
 */
export class StreamMetrics extends DeliveryMetrics {
  /** Streams opened to replace a poisoned one. */
  readonly rebuilds = new Counter();

  constructor(readonly labels: { readonly table: string; readonly stream: string }) {
    super();
  }
}
