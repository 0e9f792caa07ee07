import {
  formatSpan,
  type ByteBudget,
  type Confirm,
  type ConfirmTarget,
  type Receipt,
} from '@thalweg/connector-core';
import type { DurableReceipt } from '@thalweg/offset-store';
import type { CoverageRecorder } from './coverage-recorder.js';
import { PipelineError } from './errors.js';
import type { FailureLatch } from './failure-latch.js';
import type { GatingState } from './gating-state.js';

/**
 * The target raw is opened with: the only place a source position moves.
 * Raw calls it after its durable write, in submission order; the span's
 * budget is released, its receipt goes to raw's own coverage recorder, and
 * the tracker folds it into the committable position, which the committer
 * stores in the background. An acknowledgement of a span read before its
 * partition was revoked is counted and dropped: this member may no longer
 * commit for it.
 */
export function rawAckTarget(
  gating: GatingState,
  budget: ByteBudget,
  recorder: CoverageRecorder,
  failure: FailureLatch,
): ConfirmTarget<'primary-raw'> {
  return {
    apply: async (confirm, receipt) => {
      onRawDurable(gating, budget, recorder, failure, confirm, receipt);
    },
  };
}

function onRawDurable(
  gating: GatingState,
  budget: ByteBudget,
  recorder: CoverageRecorder,
  failure: FailureLatch,
  confirm: Confirm<'primary-raw'>,
  receipt: Receipt,
): void {
  if (confirm.kind !== 'raw-anchor') return;
  const span = confirm.span;
  const entry = gating.inflight.take(span);
  if (entry === undefined) {
    failure.fail(
      new PipelineError(
        'TWG_PIPELINE_STATE',
        `raw acknowledged ${formatSpan(span)}, which was never submitted`,
      ),
    );
    return;
  }
  // An oversized piece passed outside the budget and holds no permits.
  if (entry.cost > 0) budget.release(entry.cost);
  gating.counts.durableBatches += 1;
  gating.counts.durableRecords += entry.records;
  gating.progress += entry.records;
  if (receipt.durability !== 'none') recorder.add(receipt as DurableReceipt);
  if (entry.generation !== gating.inflight.generation(span)) {
    // Read before a revocation: this member may no longer commit for it.
    gating.counts.droppedAcks += 1;
    return;
  }
  try {
    const next = gating.tracker.markDurable(span);
    if (next !== null) gating.committer.durable(span, next);
  } catch (error) {
    failure.fail(error);
  }
}
