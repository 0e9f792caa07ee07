import {
  partitionKey,
  type HeldPartition,
  type OffsetSpan,
  type SinkId,
  type SourcePartition,
} from '@thalweg/connector-core';
import { RangeSet, type CoverageStore, type CoveredRange } from '@thalweg/offset-store';

/**
 * What one secondary is known to hold durably, as this process knows it: its
 * stored coverage over what raw held at open, and every span its recorder
 * wrote since (live or replayed by recovery). The live lane does not offer
 * a batch whose span is all inside it: after a crash the source re-reads
 * from its committed position, behind what secondaries already wrote, and
 * recovery may have replayed a gap just before live ingest reaches it.
 * Writing those spans again is safe (record-id dedup absorbs it) but doubles
 * the secondary's write load for nothing.
 *
 * Only durable coverage enters (read from the store, or recorded after the
 * sink's durable acknowledgement), so skipping a covered span never skips a
 * record the sink does not hold; nothing here is ever written as coverage.
 *
 * Apart from it, the ranges recovery is replaying into the sink right now
 * (`claim`, ADR 0030): the live lane offers only what is in neither
 * (`split`). Not durable, so never counted as covered:
 * if the replay does not cover it, the span stays a gap, and as live ingest
 * went past it, recovery's next pass replays it again.
 */
export class CoveredSpans {
  private readonly partitions = new Map<string, RangeSet>();
  private readonly claims = new Map<string, CoveredRange[][]>();

  /** Adds the sink's stored coverage over each span raw holds (at open). */
  async seed(
    coverage: CoverageStore,
    sink: SinkId,
    rawHeld: readonly HeldPartition[],
  ): Promise<void> {
    for (const { partition, spans } of rawHeld) {
      const key = { sink, topic: partition.topic, partition: partition.partition };
      for (const span of spans) {
        let at = span.start;
        for (const gap of await coverage.gaps(key, span.start, span.end)) {
          if (gap.start > at) this.add({ ...partition, start: at, end: gap.start });
          at = gap.end;
        }
        if (at < span.end) this.add({ ...partition, start: at, end: span.end });
      }
    }
  }

  add(span: OffsetSpan): void {
    if (span.end <= span.start) return;
    const key = partitionKey(span);
    let set = this.partitions.get(key);
    if (set === undefined) this.partitions.set(key, (set = new RangeSet()));
    set.add(span.start, span.end);
  }

  /** Whether every offset of the span is durably covered. */
  covers(span: OffsetSpan): boolean {
    if (span.end <= span.start) return false;
    return this.partitions.get(partitionKey(span))?.covers(span.start, span.end) === true;
  }

  /** Recovery starts replaying `ranges` (ascending) of a partition into the sink. */
  claim(partition: SourcePartition, ranges: readonly CoveredRange[]): void {
    const key = partitionKey(partition);
    let claims = this.claims.get(key);
    if (claims === undefined) this.claims.set(key, (claims = []));
    claims.push([...ranges]);
  }

  /** The replay of `ranges` settled (covered, or left a gap for the next pass). */
  release(partition: SourcePartition, ranges: readonly CoveredRange[]): void {
    const key = partitionKey(partition);
    const claims = this.claims.get(key);
    const at =
      claims?.findIndex(
        (c) => c.length === ranges.length && c.every((r, i) => same(r, ranges[i])),
      ) ?? -1;
    if (claims === undefined || at < 0) return;
    claims.splice(at, 1);
    if (claims.length === 0) this.claims.delete(key);
  }

  /**
   * The span cut into what the sink durably holds, what recovery is
   * replaying into it now, and what is missing from both (each ascending):
   * the live lane offers only the last.
   */
  split(span: OffsetSpan): SpanParts {
    if (span.end <= span.start) return { covered: [], claimed: [], missing: [] };
    const whole = [{ start: span.start, end: span.end }];
    const key = partitionKey(span);
    const notHeld = this.partitions.get(key)?.gaps(span.start, span.end) ?? whole;
    const claims = this.claims.get(key);
    if (claims === undefined) {
      return { covered: between(whole, notHeld), claimed: [], missing: notHeld };
    }
    const replaying = RangeSet.of(claims.flat());
    const missing = notHeld.flatMap((g) => replaying.gaps(g.start, g.end));
    return {
      covered: between(whole, notHeld),
      claimed: between(notHeld, missing),
      missing,
    };
  }
}

export interface SpanParts {
  readonly covered: readonly CoveredRange[];
  readonly claimed: readonly CoveredRange[];
  readonly missing: readonly CoveredRange[];
}

/** What of `outer` (ascending, disjoint) is not in `inner` (ascending, disjoint, within it). */
function between(outer: readonly CoveredRange[], inner: readonly CoveredRange[]): CoveredRange[] {
  const out: CoveredRange[] = [];
  let i = 0;
  for (const o of outer) {
    let at = o.start;
    for (; i < inner.length; i++) {
      const g = inner[i];
      if (g === undefined || g.start >= o.end) break;
      if (g.start > at) out.push({ start: at, end: g.start });
      at = Math.max(at, g.end);
    }
    if (at < o.end) out.push({ start: at, end: o.end });
  }
  return out;
}

function same(a: CoveredRange, b: CoveredRange | undefined): boolean {
  return b !== undefined && a.start === b.start && a.end === b.end;
}
