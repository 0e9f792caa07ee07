import type { StreamMetrics } from './stream-metrics.js';

/** What a stream counts, and a sink sums over its pool. */
export interface ZerobusCounts {
  readonly submittedBatches: number;
  readonly submittedRecords: number;
  readonly deliveredBatches: number;
  readonly deliveredRecords: number;
  /** Batches accepted and not yet confirmed. */
  readonly pending: number;
  readonly rebuilds: number;
  /** Permanent failures that ended one of a stream's ack lanes. */
  readonly poisoned: number;
}

/** One stream of a Zerobus sink's pool, as plain data. */
export interface ZerobusStreamStats extends ZerobusCounts {
  readonly stream: string;
  readonly retries: number;
  /** Confirmations whose target threw after the durable ack (coverage lags). */
  readonly confirmFailures: number;
  /** Batches per durable wait, median and 90th percentile (2 decimals); null before the first wait. */
  readonly coalesceP50: number | null;
  readonly coalesceP90: number | null;
}

/** A Zerobus sink's statistics: its pool's totals and each stream's own. */
export interface ZerobusSinkStats extends ZerobusCounts {
  readonly table: string;
  readonly streams: readonly ZerobusStreamStats[];
}

const round2 = (value: number | null): number | null =>
  value === null ? null : Math.round(value * 100) / 100;

/** The statistics of a sink whose pool has these streams' metrics. */
export function zerobusSinkStats(
  table: string,
  metrics: readonly StreamMetrics[],
): ZerobusSinkStats {
  const streams = metrics.map((m): ZerobusStreamStats => ({
    stream: m.labels.stream,
    submittedBatches: m.submittedBatches.value,
    submittedRecords: m.submittedRecords.value,
    deliveredBatches: m.deliveredBatches.value,
    deliveredRecords: m.deliveredRecords.value,
    pending: m.pending.value,
    rebuilds: m.rebuilds.value,
    poisoned: m.poisoned.value,
    retries: m.retries.value,
    confirmFailures: m.confirmFailures.value,
    coalesceP50: round2(m.coalesce.quantile(0.5)),
    coalesceP90: round2(m.coalesce.quantile(0.9)),
  }));
  const sum = (key: keyof ZerobusCounts): number => streams.reduce((n, s) => n + s[key], 0);
  return {
    table,
    submittedBatches: sum('submittedBatches'),
    submittedRecords: sum('submittedRecords'),
    deliveredBatches: sum('deliveredBatches'),
    deliveredRecords: sum('deliveredRecords'),
    pending: sum('pending'),
    rebuilds: sum('rebuilds'),
    poisoned: sum('poisoned'),
    streams,
  };
}
