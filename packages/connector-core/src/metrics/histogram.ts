/**
 * A fixed-bucket histogram: constant memory, cheap to observe from a hot
 * loop, and the shape Prometheus and OpenTelemetry export (cumulative bucket
 * counts plus sum and count). Quantiles are estimated by linear
 * interpolation inside the bucket that holds them, kept within the least
 * and the greatest value observed: a bucket's span is wider than what it
 * holds, and an estimate no observation reaches (a coalesce ratio of 0.5
 * from one batch per ack) would be wrong, not merely rough.
 */
export class Histogram {
  private readonly counts: number[];
  private total = 0;
  private sumOf = 0;
  private maxOf = Number.NEGATIVE_INFINITY;
  private minOf = Number.POSITIVE_INFINITY;

  /** `bounds` are ascending upper bounds; values above the last land in +Inf. */
  constructor(readonly bounds: readonly number[]) {
    if (bounds.length === 0 || bounds.some((b, i) => i > 0 && b <= (bounds[i - 1] ?? b))) {
      throw new RangeError('histogram bounds must be a non-empty ascending list');
    }
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Bounds 1, 2, 4, … up to `max`: for ratios and counts. */
  static exponential(max: number): Histogram {
    const bounds: number[] = [];
    for (let b = 1; b <= max; b *= 2) bounds.push(b);
    return new Histogram(bounds);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > (this.bounds[i] ?? Infinity)) i++;
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    this.total += 1;
    this.sumOf += value;
    if (value > this.maxOf) this.maxOf = value;
    if (value < this.minOf) this.minOf = value;
  }

  get count(): number {
    return this.total;
  }

  get sum(): number {
    return this.sumOf;
  }

  get max(): number | null {
    return this.total === 0 ? null : this.maxOf;
  }

  /** Estimated value at quantile `q` in [0, 1], or null when empty. */
  quantile(q: number): number | null {
    if (this.total === 0) return null;
    const rank = q * this.total;
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      const inBucket = this.counts[i] ?? 0;
      if (inBucket > 0 && seen + inBucket >= rank) {
        const lower = i === 0 ? 0 : (this.bounds[i - 1] ?? 0);
        const upper = i < this.bounds.length ? (this.bounds[i] ?? lower) : this.maxOf;
        const estimate = lower + ((upper - lower) * Math.max(0, rank - seen)) / inBucket;
        return Math.min(this.maxOf, Math.max(this.minOf, estimate));
      }
      seen += inBucket;
    }
    return this.maxOf;
  }

  /** Cumulative counts per upper bound, the last being +Inf. */
  buckets(): { le: number; count: number }[] {
    let running = 0;
    return this.counts.map((c, i) => {
      running += c;
      return { le: this.bounds[i] ?? Number.POSITIVE_INFINITY, count: running };
    });
  }
}
