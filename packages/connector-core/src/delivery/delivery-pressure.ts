/**
 * What a sink tells flow control about its own delivery, sampled on every
 * flow-control cycle. Only the primary-raw sink's reading drives the
 * backpressure machine: a secondary sheds to coverage gaps and never slows
 * the source.
 */
export interface DeliveryPressure {
  /** Fill of the sink's own bounded submit queue, 0..1 (the fuller of its batch and byte bounds). */
  readonly queueFill: number;
  /** Durability attempts that failed in a row and are being retried; 0 after any durable write. */
  readonly consecutiveFailures: number;
}

/** A sink that reports nothing: an empty queue, no failures. */
export const NO_PRESSURE: DeliveryPressure = Object.freeze({
  queueFill: 0,
  consecutiveFailures: 0,
});
