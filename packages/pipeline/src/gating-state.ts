import { PositionTracker, partitionKey, type SourcePartition } from '@thalweg/connector-core';
import type { PositionCommitter } from './position-committer.js';
import { RawInflight } from './raw-inflight.js';

/** What the ingest loop and raw's acknowledgements count, for `stats()`. */
export interface GatingCounts {
  sourceBatches: number;
  sourceRecords: number;
  sourceBytes: number;
  rawBatches: number;
  rawRecords: number;
  durableBatches: number;
  durableRecords: number;
  droppedAcks: number;
  /** Pieces (single records) larger than the budget could grant, passed to raw outside it. */
  oversizedPieces: number;
}

/**
 * The gating path's state, shared by the three parts that move it: the
 * ingest loop registers spans, raw's acknowledgements fold them into the
 * committable position, and the assignment handler forgets a revoked
 * partition's. Nothing of a secondary is here: secondaries never gate.
 */
export class GatingState {
  readonly tracker = new PositionTracker();
  readonly inflight = new RawInflight();
  /** The partitions the flow cycle pauses and resumes. */
  private readonly partitions = new Map<string, SourcePartition>();
  readonly counts: GatingCounts = {
    sourceBatches: 0,
    sourceRecords: 0,
    sourceBytes: 0,
    rawBatches: 0,
    rawRecords: 0,
    durableBatches: 0,
    durableRecords: 0,
    droppedAcks: 0,
    oversizedPieces: 0,
  };
  /** Grows with every batch read and every record raw made durable: the stuck detector's progress. */
  progress = 0;

  constructor(readonly committer: PositionCommitter) {}

  know(partition: SourcePartition): void {
    this.partitions.set(partitionKey(partition), partition);
  }

  forget(partition: SourcePartition): void {
    this.partitions.delete(partitionKey(partition));
  }

  known(): SourcePartition[] {
    return [...this.partitions.values()];
  }
}
