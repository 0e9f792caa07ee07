/**
 * A set of offsets as ascending runs `[start, end)`, for counting the
 * distinct offsets of rows that come in any order and maybe twice: offsets
 * that come in order (the common case: a file's rows) cost one comparison
 * each and no memory beyond their run.
 */
export class OffsetRuns {
  /** Run i is [starts[i], ends[i]); runs are disjoint, ascending, never touching. */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private distinct = 0;

  /** How many distinct offsets were added. */
  get count(): number {
    return this.distinct;
  }

  add(offset: number): void {
    this.addRange(offset, offset + 1);
  }

  /** Adds every offset of another set. */
  addAll(other: OffsetRuns): void {
    for (let i = 0; i < other.starts.length; i++)
      this.addRange(other.starts[i] as number, other.ends[i] as number);
  }

  /** The runs, ascending. */
  runs(): [start: number, end: number][] {
    return this.starts.map((s, i) => [s, this.ends[i] as number]);
  }

  /** Adds every offset of [start, end). */
  addRange(start: number, end: number): void {
    if (end <= start) return;
    const n = this.starts.length;
    const lastEnd = n === 0 ? -1 : (this.ends[n - 1] as number);
    if (n === 0 || start > lastEnd) {
      this.starts.push(start);
      this.ends.push(end);
      this.distinct += end - start;
      return;
    }
    if (start === lastEnd) {
      this.ends[n - 1] = end;
      this.distinct += end - start;
      return;
    }
    // out of order: merge [start, end) with every run it touches
    const lo = this.firstEndingAtOrAfter(start);
    let hi = lo;
    let s = start;
    let e = end;
    while (hi < n && (this.starts[hi] as number) <= e) {
      s = Math.min(s, this.starts[hi] as number);
      e = Math.max(e, this.ends[hi] as number);
      this.distinct -= (this.ends[hi] as number) - (this.starts[hi] as number);
      hi++;
    }
    this.starts.splice(lo, hi - lo, s);
    this.ends.splice(lo, hi - lo, e);
    this.distinct += e - s;
  }

  /** The index of the first run whose end is at or after `offset`. */
  private firstEndingAtOrAfter(offset: number): number {
    let lo = 0;
    let hi = this.ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ends[mid] as number) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
