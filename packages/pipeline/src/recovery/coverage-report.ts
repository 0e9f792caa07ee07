import type { SinkId } from '@thalweg/connector-core';
import type { CoverageStore, CoveredRange } from '@thalweg/offset-store';

export interface PartitionCoverage {
  readonly topic: string;
  readonly partition: number;
  readonly covered: readonly CoveredRange[];
  /** What raw holds and this sink does not (what recovery would replay). */
  readonly gaps: readonly CoveredRange[];
  readonly lagRecords: number;
}

export interface SinkCoverage {
  readonly sink: SinkId;
  readonly isRaw: boolean;
  readonly partitions: readonly PartitionCoverage[];
  readonly lagRecords: number;
}

/**
 * Per sink and partition: the covered ranges, the gaps against raw's
 * coverage, and the lag in records. Raw's own entry lists what it holds
 * (its gaps are the holes between its lowest and highest offset). The
 * operator's view of the same numbers recovery plans from.
 */
export async function coverageReport(
  store: CoverageStore,
  raw: SinkId,
  sinks: readonly SinkId[],
): Promise<SinkCoverage[]> {
  const rawKeys = (await store.destinations()).filter((k) => k.sink === raw);
  const report: SinkCoverage[] = [];
  for (const sink of [raw, ...sinks.filter((s) => s !== raw)]) {
    const partitions: PartitionCoverage[] = [];
    for (const rawKey of rawKeys) {
      const held = await store.covered(rawKey);
      const covered = sink === raw ? held : await store.covered({ ...rawKey, sink });
      const gaps: CoveredRange[] = [];
      const rawRanges = held.ranges();
      if (sink === raw) {
        const first = rawRanges[0];
        const last = rawRanges[rawRanges.length - 1];
        if (first !== undefined && last !== undefined)
          gaps.push(...held.gaps(first.start, last.end));
      } else {
        for (const r of rawRanges) gaps.push(...covered.gaps(r.start, r.end));
      }
      partitions.push({
        topic: rawKey.topic,
        partition: rawKey.partition,
        covered: covered.ranges(),
        gaps,
        lagRecords: gaps.reduce((n, g) => n + g.end - g.start, 0),
      });
    }
    report.push({
      sink,
      isRaw: sink === raw,
      partitions,
      lagRecords: partitions.reduce((n, p) => n + p.lagRecords, 0),
    });
  }
  return report;
}
