import type { SourceBatch } from '../source.js';
import { ColumnarBatch } from './columnar-batch.js';

/** How many records a batch holds, without making a columnar batch's records. */
export function recordCount(batch: SourceBatch): number {
  return batch instanceof ColumnarBatch ? batch.count : batch.records.length;
}

/** The batch as columns, or null when it holds record objects. */
export function columnarOf(batch: SourceBatch): ColumnarBatch | null {
  return batch instanceof ColumnarBatch ? batch : null;
}
