import { NO_HEADERS, type SourceRecord } from '@thalweg/connector-core';
import type { RowPlan, TimestampPlan } from './row-json.js';
import type { Data, RecordBatch } from 'apache-arrow';

/** How a stream's rows become records: the row as JSON, and its time when a column has it. */
export interface RowPlans {
  readonly rows: RowPlan;
  readonly time: TimestampPlan | undefined;
}

/** Consecutive records of one batch, the first at row offset `start`. */
export interface RecordRun {
  readonly start: number;
  readonly records: SourceRecord[];
  /** Their value bytes. */
  readonly bytes: number;
}

/**
 * The rows of `batch` from index `skip` on, as records numbered from `row`
 * (the batch's first row offset), in runs of at most `max`: each row's
 * value is its JSON, its timestamp the plan's column or the time it
 * arrived, no key and no headers. `at` is the batch's stream byte offset,
 * for a refusal of a bad time.
 *
 * The rows are rendered into one buffer per batch and each value is a view
 * of it, so a record kept alive keeps its whole batch's rendered buffer
 * alive. A run's `bytes` (what a prefetch bound counts) is the sum of its
 * values' lengths, which over a batch is about that buffer's size.
 */
export function recordRuns(
  batch: RecordBatch,
  row: number,
  skip: number,
  plan: RowPlans,
  at: number,
  max: number,
): RecordRun[] {
  const rows = batch.numRows;
  if (skip >= rows) return [];
  // The decoder checked that every column is one chunk of numRows values.
  const columns = batch.schema.fields.map((_, i) => batch.getChildAt(i)?.data[0]) as Data[];
  const { bytes: rendered, ends } = plan.rows.bind(columns)(skip, rows);
  const time = plan.time?.(columns, at);
  const arrived = Date.now();
  const runs: RecordRun[] = [];
  let from = 0;
  for (let i = skip; i < rows; i += max) {
    const last = Math.min(rows, i + max);
    const records: SourceRecord[] = new Array<SourceRecord>(last - i);
    const first = from;
    for (let j = i; j < last; j++) {
      const to = ends[j - skip] ?? from;
      records[j - i] = {
        offset: row + j,
        key: null,
        value: rendered.subarray(from, to),
        timestamp: time === undefined ? arrived : (time(j) ?? arrived),
        headers: NO_HEADERS,
      };
      from = to;
    }
    runs.push({ start: row + i, records, bytes: from - first });
  }
  return runs;
}
