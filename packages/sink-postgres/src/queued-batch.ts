import type { Confirm, OffsetSpan } from '@thalweg/connector-core';
import type { PgBatch } from './pg-batch.js';

/** A batch accepted by submit and not yet settled (confirmed, or skipped as poison). */
export interface QueuedBatch {
  /** Submission order: the order of commits and of confirmations. */
  readonly seq: number;
  readonly batch: PgBatch;
  readonly span: OffsetSpan;
  readonly confirm: Confirm<'secondary'>;
  /** Milliseconds since the epoch when submit accepted the batch. */
  readonly submittedAt: number;
}
