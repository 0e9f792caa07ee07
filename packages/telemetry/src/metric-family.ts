import type { MetricDef } from './metric-catalog.js';

export type Labels = Readonly<Record<string, string>>;

/** Cumulative bucket counts (the last bound is +Inf), with their sum and count. */
export interface HistogramValue {
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  readonly sum: number;
  readonly count: number;
}

export type Sample =
  | { readonly labels: Labels; readonly value: number }
  | { readonly labels: Labels; readonly histogram: HistogramValue };

/** One metric of the catalog with its samples at the time of collection. */
export interface MetricFamily {
  readonly def: MetricDef;
  readonly samples: readonly Sample[];
}
