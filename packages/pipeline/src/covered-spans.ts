import {
  partitionKey,
  type HeldPartition,
  type OffsetSpan,
  type SinkId,
} from '@thalweg/connector-core';
import { RangeSet, type CoverageStore } from '@thalweg/offset-store';

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
 */
export class CoveredSpans {
  private readonly partitions = new Map<string, RangeSet>();

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
}
