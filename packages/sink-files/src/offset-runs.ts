/** A half-open run of offsets `[start, end)`. */
export interface OffsetRun {
  readonly start: number;
  readonly end: number;
}

/**
 * The offsets a partition's durable batches account for, as sorted,
 * disjoint, non-adjacent runs: adding `[start, end)` merges it with every run
 * it overlaps or touches. Runs are what recovery plans from (raw holds every
 * offset of a run: as a record, or as an offset the source accounted for
 * without one), so duplicates and out-of-order redeliveries fold in.
 */
export class OffsetRuns {
  private runs: OffsetRun[] = [];

  add(start: number, end: number): void {
    const runs = this.runs;
    // First run that ends at or after `start` (it may touch or overlap).
    let lo = 0;
    let hi = runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((runs[mid]?.end ?? 0) < start) lo = mid + 1;
      else hi = mid;
    }
    let last = lo;
    let merged: OffsetRun = { start, end };
    for (; last < runs.length; last++) {
      const run = runs[last];
      if (run === undefined || run.start > merged.end) break;
      merged = { start: Math.min(merged.start, run.start), end: Math.max(merged.end, run.end) };
    }
    runs.splice(lo, last - lo, merged);
  }

  /** The runs, clipped to `[from, to)` when given. */
  list(from = 0, to = Number.MAX_SAFE_INTEGER): OffsetRun[] {
    const out: OffsetRun[] = [];
    // An empty window holds no run (clipping would make an empty one).
    if (from >= to) return out;
    for (const run of this.runs) {
      if (run.end <= from || run.start >= to) continue;
      out.push({ start: Math.max(run.start, from), end: Math.min(run.end, to) });
    }
    return out;
  }
}
