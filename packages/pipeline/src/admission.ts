import type { ByteBudget, ExpansionEstimator, SourceBatch } from '@thalweg/connector-core';
import { batchBytes, payloadBytes } from './batch-split.js';
import { PipelineError } from './errors.js';

/**
 * How a piece entered the gating path: with permits of the byte budget, or
 * outside it because its estimate exceeds what the budget can grant now.
 */
export type Admitted =
  | { readonly kind: 'budgeted'; readonly cost: number }
  | { readonly kind: 'oversized'; readonly estimate: number; readonly grantable: number };

/**
 * What the pipeline holds for a batch until raw's durable ack: the records
 * as the source handed them over (batch-split.ts's `batchBytes`, bytes and
 * object overhead) and raw's packed copy of their bytes. Its ratio to
 * `batchBytes` is the expansion the estimator samples, between 1 and 2; a
 * raw sink that packs more than the payload is the reason to estimate it
 * rather than assume it.
 */
export function heldBytes(batch: SourceBatch, read = batchBytes(batch)): number {
  return read + payloadBytes(batch);
}

/**
 * Samples a batch's expansion, once per source batch and before it is cut,
 * so that its pieces are cut and charged with one ratio.
 */
export function observeExpansion(expansion: ExpansionEstimator, batch: SourceBatch): void {
  const read = batchBytes(batch);
  if (read > 0) expansion.observe(read, heldBytes(batch, read));
}

/**
 * Charges the byte budget for one piece: its bytes as read times the
 * estimator's p95 expansion.
 * A piece whose estimate exceeds what the budget can grant now is never
 * deferred: it passes outside the budget (ADR 0024), since waiting for room
 * that cannot come would stall everything behind it, and raw keeps every
 * record. Its memory is bounded by raw's own queue, whose submit waits.
 * Otherwise the wait for permits is raced against nothing but the abort:
 * raw's acknowledgements release permits on their own path.
 */
export async function admit(
  budget: ByteBudget,
  expansion: ExpansionEstimator,
  piece: SourceBatch,
  signal: AbortSignal,
): Promise<Admitted> {
  const estimate = expansion.cost(batchBytes(piece));
  const now = budget.tryAcquire(estimate);
  if (now.kind === 'granted') return { kind: 'budgeted', cost: estimate };
  const outcome = now.kind === 'wait' ? await budget.acquire(estimate, signal) : now;
  if (outcome.kind === 'granted') return { kind: 'budgeted', cost: estimate };
  if (outcome.bytes !== estimate) {
    throw new PipelineError(
      'TWG_PIPELINE_STATE',
      `byte budget judged ${outcome.bytes} bytes, asked ${estimate}`,
    );
  }
  return { kind: 'oversized', estimate, grantable: outcome.grantable };
}

/**
 * The largest piece, in batch-split.ts's bytes, whose estimate the budget
 * can grant now: pieces are cut to it, so only a single record larger than
 * that is ever oversized (and warm-up's smaller limit cuts pieces smaller
 * instead of letting them all pass outside the budget).
 */
export function grantablePieceBytes(budget: ByteBudget, expansion: ExpansionEstimator): number {
  return Math.max(1, Math.floor(budget.stats().limitBytes / expansion.ratio));
}
