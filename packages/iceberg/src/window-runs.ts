import { DataType, Type, type RecordBatch, type Vector } from 'apache-arrow';
import { IcebergError } from './errors.js';

/**
 * The row selection of a window scan, over decoded batches: find the runs
 * of rows that belong to the window, then merge the runs of every file into
 * offset order. Both work on slices, so no row is copied: a raw table's
 * files hold each partition's rows in offset order, and then a window is a
 * few long runs, one slice each.
 */

/** Rows [begin, end) of a batch: all in the window, offsets non-decreasing. */
export interface WindowRun {
  readonly batch: RecordBatch;
  readonly offsets: ArrayLike<bigint | number>;
  readonly begin: number;
  readonly end: number;
}

interface IntColumn {
  readonly values: ArrayLike<bigint | number>;
  readonly valid: (i: number) => boolean;
}

function intColumn(batch: RecordBatch, name: string, path: string): IntColumn {
  const v: Vector | null = batch.getChild(name);
  if (v === null) {
    throw new IcebergError(
      'TWG_ICEBERG_PARQUET_CORRUPT',
      path,
      `has no column ${JSON.stringify(name)}`,
    );
  }
  const t = v.type as DataType; // Vector's default type parameter is any
  if (!(DataType.isInt(t) && t.isSigned && (t.bitWidth === 32 || t.bitWidth === 64))) {
    throw new IcebergError(
      'TWG_ICEBERG_PARQUET_CORRUPT',
      path,
      `column ${name} is ${Type[t.typeId]}, not a 32- or 64-bit signed int`,
    );
  }
  const values = v.toArray() as Int32Array | BigInt64Array;
  return { values, valid: v.nullCount === 0 ? () => true : (i) => v.isValid(i) };
}

/**
 * The runs of a batch's rows with partition == p and start <= offset < end.
 * A run ends at a row outside the window or where the offset goes down.
 * Rows with a null partition or offset belong to no window.
 */
export function windowRuns(
  batch: RecordBatch,
  path: string,
  columns: { readonly partition: string; readonly offset: string },
  p: bigint,
  start: bigint,
  end: bigint,
): WindowRun[] {
  const part = intColumn(batch, columns.partition, path);
  const off = intColumn(batch, columns.offset, path);
  // compare in the column's own representation: no bigint made per row of an int column
  const pv = part.values instanceof BigInt64Array ? p : Number(p);
  const big = off.values instanceof BigInt64Array;
  const lo = big ? start : Number(start);
  const hi = big ? end : Number(end);
  const offsets = off.values;
  const runs: WindowRun[] = [];
  let begin = -1;
  for (let i = 0; i < batch.numRows; i++) {
    const o = offsets[i] ?? 0;
    const inWindow = part.values[i] === pv && o >= lo && o < hi && part.valid(i) && off.valid(i);
    if (inWindow && begin >= 0 && o < (offsets[i - 1] ?? 0)) {
      runs.push({ batch, offsets, begin, end: i });
      begin = i;
    } else if (inWindow && begin < 0) {
      begin = i;
    } else if (!inWindow && begin >= 0) {
      runs.push({ batch, offsets, begin, end: i });
      begin = -1;
    }
  }
  if (begin >= 0) runs.push({ batch, offsets, begin, end: batch.numRows });
  return runs;
}

/**
 * Merges runs into one offset-ordered sequence of slices: take the run with
 * the lowest next offset, and from it every row up to the next-lowest head
 * of the others. Runs that do not interleave (the raw case) come out as one
 * slice each; equal offsets come from the earlier run first.
 */
export function* mergeRuns(runs: readonly WindowRun[]): Generator<RecordBatch> {
  // where each run's next row is; a run is exhausted when its cursor reaches its end
  const live = runs.map((r) => ({ run: r, pos: r.begin }));
  const head = (c: { run: WindowRun; pos: number }): bigint | number => c.run.offsets[c.pos] ?? 0;
  for (;;) {
    let best: (typeof live)[number] | undefined;
    for (const c of live) {
      if (c.pos < c.run.end && (best === undefined || head(c) < head(best))) best = c;
    }
    if (best === undefined) return;
    // the lowest head among the others: an equal one in a later run waits its turn
    let limit: bigint | number | undefined;
    for (const c of live) {
      if (c === best || c.pos >= c.run.end) continue;
      const h = head(c);
      if (limit === undefined || h < limit) limit = h;
    }
    const { run } = best;
    const from = best.pos;
    let to = from + 1;
    while (to < run.end && (limit === undefined || (run.offsets[to] ?? 0) <= limit)) to++;
    best.pos = to;
    yield run.batch.slice(from, to);
  }
}
