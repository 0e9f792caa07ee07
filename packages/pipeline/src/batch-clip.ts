import { columnarOf, type SourceBatch } from '@thalweg/connector-core';
import type { QuarantineNote } from './topology.js';

/** The part of a batch inside `want`; null when nothing of it is. */
export function clipBatch(
  batch: SourceBatch,
  want: { readonly start: number; readonly end: number },
): SourceBatch | null {
  const start = Math.max(batch.span.start, want.start);
  const end = Math.min(batch.span.end, want.end);
  if (end <= start) return null;
  if (start === batch.span.start && end === batch.span.end) return batch;
  return {
    span: { ...batch.span, start, end },
    records: batch.records.filter((r) => r.offset >= start && r.offset < end),
  };
}

/** How many records of `batch` fall inside `ranges`. */
export function recordsIn(
  batch: SourceBatch,
  ranges: readonly { start: number; end: number }[],
): number {
  return batch.records.filter((r) => ranges.some((g) => r.offset >= g.start && r.offset < g.end))
    .length;
}

/**
 * The records of `batch` handed to the sink: those the derivation did not
 * quarantine. The lane holds it until the sink settles, beside the rows
 * the sink holds, so a columnar batch is held as columns only: the records
 * the derivation made of it would be a second copy on the heap, as objects.
 */
export function submittedPart(batch: SourceBatch, refused: readonly QuarantineNote[]): SourceBatch {
  if (refused.length === 0) return columnarOf(batch)?.columnsOnly() ?? batch;
  const gone = new Set(refused.map((n) => n.offset));
  return { span: batch.span, records: batch.records.filter((r) => !gone.has(r.offset)) };
}
