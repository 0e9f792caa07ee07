import { Counter, Gauge, Histogram } from '@thalweg/connector-core';

/**
 * The metrics of one stream, labelled {table, stream}. Each stream owns its
 * instance: no counter, gauge or label is shared between streams or lanes, so
 * a stalled secondary cannot hide in (or distort) raw's numbers.
 */
export class StreamMetrics {
  /** Batches confirmed per durable wait: >> 1 under load means pipelining. */
  readonly coalesce = Histogram.exponential(4096);
  /** submitted - delivered, in batches. */
  readonly pending = new Gauge();
  /** Milliseconds from acceptance to durable confirmation, per batch. */
  readonly deliveryLatencyMs = new Histogram([
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000, 60000,
  ]);
  /** Transient failures retried on the same stream. */
  readonly retries = new Counter();
  /** Permanent failures that ended the stream's lane (the cause signal). */
  readonly poisoned = new Counter();
  /** Streams opened to replace a poisoned one. */
  readonly rebuilds = new Counter();
  /** Confirmations whose target (coverage, position) failed after a durable ack: lag, not loss. */
  readonly confirmFailures = new Counter();

  constructor(readonly labels: { readonly table: string; readonly stream: string }) {}
}
