import type { HeldPartition, SinkId } from '@thalweg/connector-core';
import { RangeSet, type CoverageStore, type CoveredRange } from '@thalweg/offset-store';

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
 * Per sink and partition: the covered ranges, the gaps against what raw
 * holds, and the lag in records. Raw's own entry lists what it holds (its
 * gaps are the holes between its lowest and highest offset).
 *
 * The one computation of lag: the CLI reports it, `pipeline.backlog()`
 * reports it and recovery plans its windows from it (`planRecovery`). What
 * raw holds is `rawHeld` when given — read from raw itself, as recovery
 * plans (ADR 0012) — and otherwise raw's coverage in the store, which is
 * what an operator without the raw sink open can read; the pipeline merges
 * raw's holdings into the store at open and at shutdown, so the two agree
 * whenever no pipeline is running.
 */
export async function coverageReport(
  store: CoverageStore,
  raw: SinkId,
  sinks: readonly SinkId[],
  rawHeld?: readonly HeldPartition[],
): Promise<SinkCoverage[]> {
  const held = rawHeld ?? (await heldInStore(store, raw));
  const rawPartitions = held.map(({ partition, spans }) => {
    const set = RangeSet.of(spans);
    const ranges = set.ranges();
    const first = ranges[0];
    const last = ranges[ranges.length - 1];
    const holes = first === undefined || last === undefined ? [] : set.gaps(first.start, last.end);
    return entry(partition.topic, partition.partition, ranges, holes);
  });
  return [
    { sink: raw, isRaw: true, partitions: rawPartitions, lagRecords: total(rawPartitions) },
    ...(await coverageAgainst(
      store,
      held,
      sinks.filter((s) => s !== raw),
    )),
  ];
}

/** Each sink's coverage and gaps against `rawHeld`, partition by partition, in its order. */
export async function coverageAgainst(
  store: CoverageStore,
  rawHeld: readonly HeldPartition[],
  sinks: readonly SinkId[],
): Promise<SinkCoverage[]> {
  const report: SinkCoverage[] = [];
  for (const sink of sinks) {
    const partitions: PartitionCoverage[] = [];
    for (const { partition, spans } of rawHeld) {
      const covered = await store.covered({
        sink,
        topic: partition.topic,
        partition: partition.partition,
      });
      const gaps: CoveredRange[] = [];
      for (const r of RangeSet.of(spans).ranges()) gaps.push(...covered.gaps(r.start, r.end));
      partitions.push(entry(partition.topic, partition.partition, covered.ranges(), gaps));
    }
    report.push({ sink, isRaw: false, partitions, lagRecords: total(partitions) });
  }
  return report;
}

/** Raw's recorded coverage in the store, in the shape raw reports its holdings. */
async function heldInStore(store: CoverageStore, raw: SinkId): Promise<HeldPartition[]> {
  const keys = (await store.destinations()).filter((k) => k.sink === raw);
  const held: HeldPartition[] = [];
  for (const key of keys) {
    const partition = { topic: key.topic, partition: key.partition };
    const ranges = (await store.covered(key)).ranges();
    held.push({ partition, spans: ranges.map((r) => ({ ...partition, ...r })) });
  }
  return held;
}

function entry(
  topic: string,
  partition: number,
  covered: readonly CoveredRange[],
  gaps: readonly CoveredRange[],
): PartitionCoverage {
  return {
    topic,
    partition,
    covered,
    gaps,
    lagRecords: gaps.reduce((n, g) => n + g.end - g.start, 0),
  };
}

function total(partitions: readonly PartitionCoverage[]): number {
  return partitions.reduce((n, p) => n + p.lagRecords, 0);
}
