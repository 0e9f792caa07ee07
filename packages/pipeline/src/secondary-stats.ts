/** Where a secondary's lane is. */
export type LaneState =
  | { readonly kind: 'running' }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'closed' };

export interface SecondaryStats {
  readonly sink: string;
  readonly state: LaneState['kind'];
  readonly queuedBatches: number;
  readonly queuedBytes: number;
  readonly submittedBatches: number;
  readonly deliveredBatches: number;
  readonly deliveredRecords: number;
  /** Batches dropped because the lane was full or failed: coverage gaps for recovery. */
  readonly shedBatches: number;
  readonly shedRecords: number;
  /** Live batches not offered: the sink durably held all of their span already. */
  readonly alreadyCoveredBatches: number;
  readonly alreadyCoveredRecords: number;
  /**
   * Live batches not offered: recovery was replaying the rest of their span
   * into the sink (what that replay leaves uncovered, its next pass repairs).
   */
  readonly replayingBatches: number;
  readonly replayingRecords: number;
  /**
   * Batches the sink refused alone or set aside (poison, retries exhausted):
   * their records are quarantined, and the lane went on (ADR 0025).
   */
  readonly setAsideBatches: number;
  readonly quarantined: number;
}
