import type { HeldPartition, SinkId, SourcePartition } from '@thalweg/connector-core';
import type { CoverageStore, CoveredRange } from '@thalweg/offset-store';
import { coverageAgainst } from './coverage-report.js';

/**
 * A bounded piece of one secondary's missing coverage in one partition: the
 * gaps against raw inside one cell of a fixed grid of `windowRecords`
 * offsets. The grid makes planning deterministic — every planner names the
 * same region with the same key — and the key ends with the first missing
 * offset, so a window finished once is never confused with a gap that opens
 * later in the same cell (coverage only grows; a later gap starts elsewhere).
 */
export interface RecoveryWindow {
  readonly key: string;
  readonly sink: SinkId;
  readonly topic: string;
  readonly partition: number;
  /** The missing ranges, ascending, inside the window's grid cell. */
  readonly gaps: readonly CoveredRange[];
  readonly records: number;
}

export interface RecoveryPlan {
  readonly windows: readonly RecoveryWindow[];
  /** Per destination sink: offsets raw holds that it does not. */
  readonly lagBySink: Readonly<Record<string, number>>;
}

/**
 * Reads the durable coverage of every secondary and cuts what each lacks
 * against what raw holds (read from raw itself, never beyond it: only what
 * raw holds can be replayed, and raw's own recorded coverage can lag after a
 * crash) into windows, the most-lagging destination's
 * oldest windows first.
 */
export async function planRecovery(
  coverage: CoverageStore,
  /** What raw holds, read from raw itself (`ReplayableSink.held`). */
  rawHeld: readonly HeldPartition[],
  secondaries: readonly SinkId[],
  windowRecords: number,
  /** Where a live lane may still deliver on its own: gaps from there on are left to it. */
  liveFloor: (sink: SinkId, partition: SourcePartition) => number | null = () => null,
): Promise<RecoveryPlan> {
  const windows: RecoveryWindow[] = [];
  const lagBySink: Record<string, number> = {};
  // The lag is the coverage report's, to the record: every gap counts,
  // including what the live lane still holds; windows leave that to it.
  for (const { sink, partitions, lagRecords } of await coverageAgainst(
    coverage,
    rawHeld,
    secondaries,
  )) {
    lagBySink[sink] = lagRecords;
    for (const p of partitions) {
      const floor =
        liveFloor(sink, { topic: p.topic, partition: p.partition }) ?? Number.POSITIVE_INFINITY;
      const gaps: CoveredRange[] = [];
      for (const gap of p.gaps) {
        if (gap.start < floor) gaps.push({ start: gap.start, end: Math.min(gap.end, floor) });
      }
      for (const window of cut(gaps, windowRecords)) {
        const records = window.reduce((n, g) => n + g.end - g.start, 0);
        const first = window[0];
        if (first === undefined) continue;
        const cell = Math.floor(first.start / windowRecords);
        windows.push({
          key: `${sink}/${p.topic}/${p.partition}/${cell}/${first.start}`,
          sink,
          topic: p.topic,
          partition: p.partition,
          gaps: window,
          records,
        });
      }
    }
  }
  windows.sort(
    (a, b) =>
      (lagBySink[b.sink] ?? 0) - (lagBySink[a.sink] ?? 0) ||
      (a.gaps[0]?.start ?? 0) - (b.gaps[0]?.start ?? 0),
  );
  return { windows, lagBySink };
}

/** Splits ascending gaps at the grid lines `k * size`, grouping the pieces of one cell. */
export function cut(gaps: readonly CoveredRange[], size: number): CoveredRange[][] {
  const cells: CoveredRange[][] = [];
  let current: CoveredRange[] = [];
  let currentCell = -1;
  for (const gap of gaps) {
    let start = gap.start;
    while (start < gap.end) {
      const cell = Math.floor(start / size);
      const end = Math.min(gap.end, (cell + 1) * size);
      if (cell !== currentCell) {
        if (current.length > 0) cells.push(current);
        current = [];
        currentCell = cell;
      }
      current.push({ start, end });
      start = end;
    }
  }
  if (current.length > 0) cells.push(current);
  return cells;
}
