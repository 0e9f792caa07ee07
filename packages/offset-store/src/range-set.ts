// Indices below are bounds-checked by the surrounding loops and searches;
// noUncheckedIndexedAccess cannot see that, hence the non-null assertions.
/* eslint-disable @typescript-eslint/no-non-null-assertion */
import { checkRange, type CoveredRange } from './covered-range.js';

/**
 * The covered offsets of one (sink, topic, partition): a set of disjoint,
 * sorted ranges kept in normal form — no two ranges overlap or touch. The
 * normal form is the only compaction there is: two ranges merge only when
 * they overlap or are adjacent, so a gap nobody recorded is never closed.
 *
 * Merging is union, never replacement: recording a range can only add
 * offsets, which is why concurrent writers (a rebalance, a recovery worker
 * beside live ingest) cannot erase each other's coverage.
 */
export class RangeSet {
  // Parallel arrays: ends[i] < starts[i + 1] for every i (normal form).
  private starts: number[] = [];
  private ends: number[] = [];

  static of(ranges: Iterable<CoveredRange>): RangeSet {
    const set = new RangeSet();
    for (const r of ranges) set.add(r.start, r.end);
    return set;
  }

  /** The union of two sets, as a new set. Commutative, associative, idempotent. */
  static union(a: RangeSet, b: RangeSet): RangeSet {
    const out = new RangeSet();
    let i = 0;
    let j = 0;
    while (i < a.starts.length || j < b.starts.length) {
      const takeA = j >= b.starts.length || (i < a.starts.length && a.starts[i]! <= b.starts[j]!);
      const start = takeA ? a.starts[i]! : b.starts[j]!;
      const end = takeA ? a.ends[i++]! : b.ends[j++]!;
      const last = out.ends.length - 1;
      if (last >= 0 && start <= out.ends[last]!) {
        if (end > out.ends[last]!) out.ends[last] = end;
      } else {
        out.starts.push(start);
        out.ends.push(end);
      }
    }
    return out;
  }

  /** Adds `[start, end)`. Returns true when the set gained offsets. */
  add(start: number, end: number): boolean {
    return this.addTracked(start, end) !== null;
  }

  /**
   * Adds `[start, end)` and reports the change: the stored ranges it
   * swallowed and the range now standing in their place, or null when the
   * set already covered it. Lets a storage backend write only what changed.
   */
  addTracked(start: number, end: number): { removed: CoveredRange[]; merged: CoveredRange } | null {
    checkRange(start, end);
    // First range whose end reaches start (touching merges), last range whose
    // start reaches end.
    const i = lowerBound(this.ends, start);
    const j = upperBound(this.starts, end) - 1;
    if (i > j) {
      if (i === this.starts.length) {
        this.starts.push(start);
        this.ends.push(end);
      } else {
        this.starts.splice(i, 0, start);
        this.ends.splice(i, 0, end);
      }
      return { removed: [], merged: { start, end } };
    }
    const mergedStart = Math.min(start, this.starts[i]!);
    const mergedEnd = Math.max(end, this.ends[j]!);
    if (i === j && mergedStart === this.starts[i] && mergedEnd === this.ends[j]) return null;
    const removed: CoveredRange[] = [];
    for (let k = i; k <= j; k++) removed.push({ start: this.starts[k]!, end: this.ends[k]! });
    this.starts.splice(i, j - i + 1, mergedStart);
    this.ends.splice(i, j - i + 1, mergedEnd);
    return { removed, merged: { start: mergedStart, end: mergedEnd } };
  }

  addAll(ranges: Iterable<CoveredRange>): void {
    for (const r of ranges) this.add(r.start, r.end);
  }

  contains(offset: number): boolean {
    const i = upperBound(this.starts, offset) - 1;
    return i >= 0 && offset < this.ends[i]!;
  }

  /** True when every offset of `[start, end)` is covered. */
  covers(start: number, end: number): boolean {
    const i = upperBound(this.starts, start) - 1;
    return i >= 0 && end <= this.ends[i]!;
  }

  /**
   * The uncovered ranges within `[from, to)`, ascending: what recovery must
   * replay for this destination up to `to` (raw's durable high-water).
   */
  gaps(from: number, to: number): CoveredRange[] {
    const out: CoveredRange[] = [];
    if (to <= from) return out;
    let at = from;
    for (let i = Math.max(0, upperBound(this.starts, from) - 1); i < this.starts.length; i++) {
      const s = this.starts[i]!;
      const e = this.ends[i]!;
      if (s >= to) break;
      if (e <= at) continue;
      if (s > at) out.push({ start: at, end: s });
      at = e;
      if (at >= to) return out;
    }
    if (at < to) out.push({ start: at, end: to });
    return out;
  }

  ranges(): CoveredRange[] {
    return this.starts.map((start, i) => ({ start, end: this.ends[i]! }));
  }

  /** Number of disjoint ranges (one more than the number of inner gaps). */
  get rangeCount(): number {
    return this.starts.length;
  }

  /** Number of covered offsets. */
  get offsetCount(): number {
    let n = 0;
    for (let i = 0; i < this.starts.length; i++) n += this.ends[i]! - this.starts[i]!;
    return n;
  }

  /** The lowest uncovered offset at or after `from`. */
  firstGapAt(from: number): number {
    const i = upperBound(this.starts, from) - 1;
    return i >= 0 && from < this.ends[i]! ? this.ends[i]! : from;
  }

  equals(other: RangeSet): boolean {
    if (other.starts.length !== this.starts.length) return false;
    return this.starts.every((s, i) => s === other.starts[i] && this.ends[i] === other.ends[i]);
  }

  clone(): RangeSet {
    const copy = new RangeSet();
    copy.starts = this.starts.slice();
    copy.ends = this.ends.slice();
    return copy;
  }
}

/** First index whose value is >= x. */
function lowerBound(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose value is > x. */
function upperBound(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
