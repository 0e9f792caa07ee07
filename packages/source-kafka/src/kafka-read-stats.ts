import type { SourcePartition } from '@thalweg/connector-core';

/** What the reader did so far, for a mode's `stats()`. */
export interface KafkaReadStats {
  /** Batches, records and record bytes yielded by `batches()`. */
  readonly batches: number;
  readonly records: number;
  readonly bytes: number;
  /** Yielded batches with no record (only aborted, control or compacted offsets). */
  readonly emptyBatches: number;
  readonly queuedBatches: number;
  readonly queuedBytes: number;
  /** Times a partition was paused because the queue was over its bounds, and for how long any was. */
  readonly queuePauses: number;
  readonly queuePausedMs: number;
  readonly pausedByPipeline: readonly SourcePartition[];
  /** Queued batches dropped because their partition was revoked. */
  readonly purgedBatches: number;
  /** Batches the client delivered for a partition outside the assignment (dropped). */
  readonly staleBatches: number;
  /** Records dropped because they lay before what was already queued or sought. */
  readonly skippedRecords: number;
  readonly joins: number;
  readonly assignment: readonly SourcePartition[];
}
