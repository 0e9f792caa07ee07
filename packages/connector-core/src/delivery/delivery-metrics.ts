import { Counter, Gauge } from '../metrics/counter.js';
import { Histogram } from '../metrics/histogram.js';

/**
 * The metrics of one ack lane. Each lane owns its instance: nothing is
 * shared between two lanes (raw and a secondary, or two streams of one
 * sink), so a stalled secondary can neither delay raw's numbers nor hide
 * in them.
 */
export class DeliveryMetrics {
  /** Batches per durability wait: >> 1 under load means the lane pipelines, a steady 1 that it does not. */
  readonly coalesce = Histogram.exponential(4096);
  /** Batches handed to the lane and not yet settled (submitted - delivered). */
  readonly pending = new Gauge();
  /** Milliseconds from acceptance to durable confirmation, per batch. */
  readonly deliveryLatencyMs = new Histogram([
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000, 60000,
  ]);
  /** Durability steps retried after a transient failure (the lane carried on). */
  readonly retries = new Counter();
  /** Attempts failed in a row, set by the sink's step: 0 once a write is durable again. */
  readonly consecutiveFailures = new Gauge();
  /** Permanent failures that ended the lane: the cause signal a runbook branches on. */
  readonly poisoned = new Counter();
  /** Confirmations whose target threw after the durable step: lag, not loss. */
  readonly confirmFailures = new Counter();
  /** Batches the lane accepted: the submitted watermark (its count, kept across rebuilt lanes). */
  readonly submitted = new Counter();
  /** Batches the lane settled (confirmed or set aside): the delivered watermark. */
  readonly delivered = new Counter();
  /** Fill of the lane's bounded queue, 0..1, at its last change: ack-lane saturation. */
  readonly saturation = new Gauge();
}

/**
 * One ack lane of a sink, as telemetry reads it: a sink with one lane
 * (raw's segments, PostgreSQL) has stream `0`; a sink with a pool of
 * streams (Zerobus) one entry per stream. Together with the sink's id the
 * stream names the lane, so no two lanes share a label set.
 */
export interface LaneMetrics {
  readonly stream: string;
  readonly metrics: DeliveryMetrics;
}
