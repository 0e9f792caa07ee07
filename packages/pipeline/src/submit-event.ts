import {
  events,
  recordCount,
  type Lane,
  type SinkId,
  type SourceBatch,
} from '@thalweg/connector-core';

/**
 * Tells the `submitted` channel that a sink accepted a batch (raw's submit,
 * or a secondary lane's), when anyone listens: nothing is built otherwise.
 */
export function publishSubmitted(sink: SinkId, lane: Lane, batch: SourceBatch): void {
  if (!events.submitted.active) return;
  events.submitted.publish({ sink, lane, span: batch.span, records: recordCount(batch) });
}
