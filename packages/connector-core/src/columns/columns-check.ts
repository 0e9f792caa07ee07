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
  const rows = batch.rowsProblem();
  if (rows !== null) return rows;
  const regions = batch.regionsProblem();
  if (regions === null) return null;
  const last = batch.count === 0 ? -1 : batch.offsetAt(batch.count - 1);
  return { ...regions, offset: regions.row < batch.count ? batch.offsetAt(regions.row) : last };
}
