import type { OffsetSpan, SinkId } from '@thalweg/connector-core';
import type { DurableReceipt } from '@thalweg/offset-store';

/** The receipt of a span nothing of which is left for the sink: covered, with no record written. */
export function emptyReceipt(
  sink: SinkId,
  span: OffsetSpan,
  durability: DurableReceipt['durability'],
): DurableReceipt {
  const now = Date.now();
  return {
    sink,
    span,
    durability,
    records: 0,
    bytes: 0,
    submittedAt: now,
    confirmedAt: now,
  };
}
