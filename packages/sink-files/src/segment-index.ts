import { partitionKey, type OffsetSpan, type SourcePartition } from '@thalweg/connector-core';
import { OffsetRuns } from './offset-runs.js';
import type { SegmentLayout } from './segment-layout.js';

/** One source batch inside a durable segment. */
export interface IndexedBatch {
  readonly segment: IndexedSegment;
  /** Position of the batch in its segment. */
  readonly position: number;
  readonly span: OffsetSpan;
  readonly records: number;
}

/** A durable segment file and what it holds. */
export interface IndexedSegment {
  /** File name within the sink's directory. */
  readonly file: string;
  readonly sequence: number;
  readonly bytes: number;
  /** Where its bytes lie and their checksums: every read checks the file against it. */
  readonly layout: SegmentLayout;
  readonly batches: readonly IndexedBatch[];
}

interface PartitionEntry {
  readonly partition: SourcePartition;
  readonly batches: IndexedBatch[];
  readonly runs: OffsetRuns;
}

/**
 * What raw holds, in memory: segments -> batches -> spans, per partition,
 * built from the directory manifest on open and extended after every durable
 * write (never before: the index shows only what a confirmation could
 * already have been given for). Reads consult it to open only the segments
 * whose batches overlap the requested span.
 */
export class SegmentIndex {
  private readonly segmentList: IndexedSegment[] = [];
  private readonly byPartition = new Map<string, PartitionEntry>();

  add(
    file: string,
    sequence: number,
    layout: SegmentLayout,
    batches: readonly Omit<IndexedBatch, 'segment' | 'position'>[],
  ): IndexedSegment {
    const indexed: IndexedBatch[] = [];
    const segment: IndexedSegment = {
      file,
      sequence,
      bytes: layout.bytes,
      layout,
      batches: indexed,
    };
    batches.forEach((b, position) => indexed.push({ ...b, segment, position }));
    this.segmentList.push(segment);
    for (const batch of indexed) {
      const key = partitionKey(batch.span);
      let entry = this.byPartition.get(key);
      if (entry === undefined) {
        entry = {
          partition: { topic: batch.span.topic, partition: batch.span.partition },
          batches: [],
          runs: new OffsetRuns(),
        };
        this.byPartition.set(key, entry);
      }
      entry.batches.push(batch);
      entry.runs.add(batch.span.start, batch.span.end);
    }
    return segment;
  }

  segments(): readonly IndexedSegment[] {
    return this.segmentList;
  }

  partitions(): SourcePartition[] {
    return [...this.byPartition.values()]
      .map((e) => e.partition)
      .sort((a, b) =>
        a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
      );
  }

  /** Merged durable runs of `partition`, clipped to `[from, to)`. */
  runs(partition: SourcePartition, from?: number, to?: number): OffsetSpan[] {
    const entry = this.byPartition.get(partitionKey(partition));
    if (entry === undefined) return [];
    return entry.runs
      .list(from, to)
      .map((r) => ({ topic: partition.topic, partition: partition.partition, ...r }));
  }

  /** Batches of the span's partition whose span overlaps it, in write order. */
  overlapping(span: OffsetSpan): IndexedBatch[] {
    const entry = this.byPartition.get(partitionKey(span));
    if (entry === undefined) return [];
    return entry.batches.filter((b) => b.span.start < span.end && b.span.end > span.start);
  }
}
