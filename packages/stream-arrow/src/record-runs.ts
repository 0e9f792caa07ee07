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
 */
export function recordRuns(
  batch: RecordBatch,
  row: number,
  skip: number,
  plan: RowPlans,
  at: number,
  max: number,
): RecordRun[] {
  // The decoder checked that every column is one chunk of numRows values.
  const columns = batch.schema.fields.map((_, i) => batch.getChildAt(i)?.data[0]) as Data[];
  const render = plan.rows.bind(columns);
  const time = plan.time?.(columns, at);
  const arrived = Date.now();
  const runs: RecordRun[] = [];
  for (let i = skip; i < batch.numRows; i += max) {
    const records: SourceRecord[] = [];
    let bytes = 0;
    for (let j = i; j < Math.min(batch.numRows, i + max); j++) {
      const value = Buffer.from(render(j), 'utf8');
      bytes += value.byteLength;
      records.push({
        offset: row + j,
        key: null,
        value,
        timestamp: time?.(j) ?? arrived,
        headers: NO_HEADERS,
      });
    }
    runs.push({ start: row + i, records, bytes });
  }
  return runs;
}
