import { findSourceError, KafkaSourceError } from './errors.js';

/**
 * The error a consumer crash ends the source with: the source's own error
 * if one caused it (a refused record, a misuse), else a consumer failure
 * naming the client's cause.
 */
export function crashError(cause: unknown): Error {
  return (
    findSourceError(cause) ??
    new KafkaSourceError(
      'TWG_KAFKA_CONSUMER_FAILED',
      `the Kafka consumer failed and will not restart: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    )
  );
}
