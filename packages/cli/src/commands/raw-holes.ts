import type { SinkId } from '@thalweg/connector-core';
import type { SinkCoverage } from '@thalweg/pipeline';
import type { RawCheck } from '@thalweg/sink-files';

interface Range {
  readonly start: number;
  readonly end: number;
}

/**
 * Raw's line of `thalweg coverage`, from what the raw directory holds
 * (checkRaw) rather than what the coverage store recorded for it: covered is
 * what raw soundly holds; its holes are the gaps between that, the ranges of
 * missing or damaged segments, and whatever the store recorded as raw's
 * that raw no longer holds (a deleted last segment leaves no other trace).
 */
export function rawCoverageFromDisk(
  raw: SinkId,
  recorded: SinkCoverage | undefined,
  check: RawCheck,
): SinkCoverage {
  const keys = new Map<string, { topic: string; partition: number }>();
  const key = (topic: string, partition: number) => {
    const k = JSON.stringify([topic, partition]);
    if (!keys.has(k)) keys.set(k, { topic, partition });
    return k;
  };
  for (const p of recorded?.partitions ?? []) key(p.topic, p.partition);
  for (const p of check.partitions) key(p.partition.topic, p.partition.partition);
  const partitions = [...keys.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, { topic, partition }]) => {
      const onDisk = check.partitions.find(
        (p) => p.partition.topic === topic && p.partition.partition === partition,
      );
      const held = onDisk?.held ?? [];
      const claimed =
        recorded?.partitions.find((p) => p.topic === topic && p.partition === partition)?.covered ??
        [];
      const gaps = merge([...(onDisk?.holes ?? []), ...claimed.flatMap((c) => subtract(c, held))]);
      return {
        topic,
        partition,
        covered: held,
        gaps,
        lagRecords: gaps.reduce((n, g) => n + g.end - g.start, 0),
      };
    });
  return {
    sink: raw,
    isRaw: true,
    partitions,
    lagRecords: partitions.reduce((n, p) => n + p.lagRecords, 0),
  };
}

/** `range` minus the (ascending, disjoint) `held` ranges. */
function subtract(range: Range, held: readonly Range[]): Range[] {
  const out: Range[] = [];
  let at = range.start;
  for (const h of held) {
    if (h.end <= at || h.start >= range.end) continue;
    if (h.start > at) out.push({ start: at, end: h.start });
    at = Math.max(at, h.end);
  }
  if (at < range.end) out.push({ start: at, end: range.end });
  return out;
}

function merge(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last !== undefined && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ start: r.start, end: r.end });
  }
  return out;
}
