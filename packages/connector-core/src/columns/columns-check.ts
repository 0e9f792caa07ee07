import type { ColumnarBatch } from './columnar-batch.js';

/** What is wrong with a columnar batch: the field, the offset (or row) and why. */
export interface ColumnsProblem {
  readonly field: string;
  readonly offset: number;
  readonly reason: string;
}

/**
 * The first problem of a columnar batch, or null: what raw checks before it
 * packs one (a `ColumnsWriter` checked each record as it wrote, but a batch
 * can also be made over columns from elsewhere). Offsets are safe integers,
 * strictly increasing and inside the span; timestamps are safe integers; each
 * binary column's offsets never go back and stay inside its region. One pass
 * of integer compares, no record made.
 */
export function columnsProblem(batch: ColumnarBatch): ColumnsProblem | null {
  const { span } = batch;
  const n = batch.count;
  let previous = -1;
  for (let i = 0; i < n; i++) {
    const offset = batch.offsetAt(i);
    if (
      !Number.isSafeInteger(offset) ||
      offset < span.start ||
      offset >= span.end ||
      offset <= previous
    ) {
      return {
        field: 'offset',
        offset: Number.isSafeInteger(offset) ? offset : i,
        reason:
          `row ${i}: offset ${offset} is not a safe integer inside the span ` +
          `[${span.start}, ${span.end}) above the previous one (${previous})`,
      };
    }
    previous = offset;
    const timestamp = batch.timestampAt(i);
    if (!Number.isSafeInteger(timestamp)) {
      return { field: 'timestamp', offset, reason: `timestamp ${timestamp} is not a safe integer` };
    }
  }
  const regions = batch.regionsProblem();
  return regions === null
    ? null
    : { ...regions, offset: regions.row < n ? batch.offsetAt(regions.row) : previous };
}
