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
 * (`claim`, ADR 0030): a live batch inside them and what the sink holds is
 * not offered either (`claimed`). Not durable, so never counted as covered:
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
   * Whether every offset of the span not durably covered is being replayed
   * by recovery now (and some is: a wholly covered span is `covers`).
   */
  claimed(span: OffsetSpan): boolean {
    if (span.end <= span.start) return false;
    const claims = this.claims.get(partitionKey(span));
    if (claims === undefined) return false;
    const held = this.partitions.get(partitionKey(span));
    const missing = held?.gaps(span.start, span.end) ?? [{ start: span.start, end: span.end }];
    const replaying = RangeSet.of(claims.flat());
    return missing.every((g) => replaying.covers(g.start, g.end));
  }
}

function same(a: CoveredRange, b: CoveredRange | undefined): boolean {
  return b !== undefined && a.start === b.start && a.end === b.end;
}
