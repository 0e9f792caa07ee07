import type { ExpansionEstimatorConfig } from './expansion-estimator-config.js';
import { FlowControlError } from './flow-control-errors.js';

/**
 * Estimates a record's expanded (decoded, in-memory) size from its wire size,
 * so that the byte budget reserves what the record will actually occupy.
 *
 * The ratio is a high percentile (p95 by default) of recent samples, not the
 * mean: a few highly compressible records (long runs, repeated keys) expand
 * 50x or more and would drag a mean far above the typical record, wasting
 * budget on reservations nobody uses. The percentile ignores such a
 * minority. The seed ratio holds until `minSamples` samples exist; after
 * that, `floorRatio` is the least the estimate falls to.
 */
export class ExpansionEstimator {
  private readonly ring: Float64Array;
  private readonly scratch: Float64Array;
  private count = 0;
  private next = 0;
  private sinceRefresh = 0;
  private current: number;
  private fromSamples = false;

  constructor(private readonly config: ExpansionEstimatorConfig) {
    this.ring = new Float64Array(config.window);
    this.scratch = new Float64Array(config.window);
    this.current = config.seedRatio;
  }

  /** The ratio estimates use now. */
  get ratio(): number {
    return this.current;
  }

  get samples(): number {
    return this.count;
  }

  /** Records one decoded record: its size on the wire and in memory. */
  observe(wireBytes: number, expandedBytes: number): void {
    if (!(wireBytes > 0) || !(expandedBytes >= 0) || !Number.isFinite(expandedBytes)) {
      throw new FlowControlError(
        'TWG_BUDGET_AMOUNT_INVALID',
        `expansion sample: expected wireBytes > 0 and expandedBytes >= 0, got ${String(wireBytes)} -> ${String(expandedBytes)}`,
      );
    }
    this.ring[this.next] = expandedBytes / wireBytes;
    this.next = this.next + 1 === this.ring.length ? 0 : this.next + 1;
    if (this.count < this.ring.length) this.count += 1;
    this.sinceRefresh += 1;
    if (this.count < this.config.minSamples) return;
    // Sorting the window per sample would dominate admission; recompute in steps.
    if (!this.fromSamples || this.sinceRefresh >= this.config.refreshEvery) {
      this.refresh();
    }
  }

  /** Bytes to reserve for a record of `wireBytes` on the wire; at least 1. */
  cost(wireBytes: number): number {
    // NaN or a negative size would cost 1 byte and let the budget over-admit.
    if (!(wireBytes >= 0) || !Number.isFinite(wireBytes)) {
      throw new FlowControlError(
        'TWG_BUDGET_AMOUNT_INVALID',
        `wireBytes: expected a finite size >= 0, got ${String(wireBytes)}`,
      );
    }
    const est = Math.ceil(wireBytes * this.current);
    return est >= 1 ? est : 1;
  }

  private refresh(): void {
    this.fromSamples = true;
    this.sinceRefresh = 0;
    const n = this.count;
    const sorted = this.scratch.subarray(0, n);
    sorted.set(this.ring.subarray(0, n));
    sorted.sort();
    // Nearest-rank percentile: the smallest sample at or above the share.
    const rank = Math.min(n - 1, Math.max(0, Math.ceil(this.config.percentile * n) - 1));
    const observed = sorted[rank] ?? this.config.seedRatio;
    this.current = observed > this.config.floorRatio ? observed : this.config.floorRatio;
  }
}
