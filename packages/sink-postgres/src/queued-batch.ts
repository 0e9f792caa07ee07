import type { Pending } from '@thalweg/connector-core';
import type { PgBatch } from './pg-batch.js';

/**
 * A batch accepted by submit and not yet settled (confirmed, or skipped as
 * poison). Its position is its seq, the submission order: the order of
 * commits and of confirmations. It costs the queue its rows' estimated
 * heap bytes (pg-batch.ts's `rowsHeapBytes`); the encoded size is known only
 * at commit, and goes in the receipt.
 */
export interface QueuedBatch extends Pending<number, 'secondary'> {
  readonly batch: PgBatch;
}
