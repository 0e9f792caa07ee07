import type { SourceBatch } from '@thalweg/connector-core';

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
