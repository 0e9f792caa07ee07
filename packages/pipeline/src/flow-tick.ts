import {
  NO_PRESSURE,
  type ReplayableSink,
  type Source,
  type SourceBatch,
} from '@thalweg/connector-core';
import { PipelineError } from './errors.js';
import type { DqAuditRecorder } from './dq/dq-audit-recorder.js';
import type { FailureLatch } from './failure-latch.js';
import type { FlowGovernor } from './flow-governor.js';
import type { GatingState } from './gating-state.js';
import type { PerLane } from './per-lane.js';

export interface FlowTickDeps {
  readonly governor: FlowGovernor;
  readonly gating: GatingState;
  readonly source: Source;
  readonly raw: ReplayableSink<SourceBatch>;
  readonly perLane: PerLane;
  /** The dq-audit trail's background writer: one round per cycle, like coverage. */
  readonly dq: DqAuditRecorder;
  readonly failure: FailureLatch;
  readonly memoryUsage: () => number;
  readonly log: (line: string) => void;
}

/**
 * One flow-control cycle, every `evaluateEveryMs` on the pipeline's
 * scheduler: the governor decides on memory, the fill of raw's queue and of
 * the source's prefetch, raw's failing writes and progress; the source is
 * paused or resumed on its decision, and a stuck run is stopped. Then the
 * background work of the cycle starts: a commit of the newest durable
 * positions, one coverage round per lane, one round of the dq-audit trail,
 * and a quarantine with no writer let go. The promise ends when that work
 * has, and never rejects (a failure goes to the latch); a scheduler on real
 * timers does not wait for it, a test's manual clock does.
 */
export function flowTick(deps: FlowTickDeps): Promise<void> {
  const { governor, gating, log } = deps;
  const cycle = governor.evaluate({
    memoryBytes: deps.memoryUsage(),
    raw: deps.raw.pressure?.() ?? NO_PRESSURE,
    sourceFill: deps.source.prefetchFill?.() ?? 0,
    progress: gating.progress,
  });
  if (cycle.backpressure.kind === 'transition') {
    log(
      `backpressure ${cycle.backpressure.from} -> ${cycle.backpressure.state.kind} ` +
        `(batch factor ${cycle.backpressure.batchFactor})`,
    );
  }
  if (cycle.pauseChanged) {
    const partitions = gating.known();
    if (governor.throttle.paused) deps.source.pause(partitions);
    else deps.source.resume(partitions);
  }
  if (cycle.stuck.kind !== 'steady') {
    log(`stuck detector ${cycle.stuck.from} -> ${cycle.stuck.status.level}`);
    if (cycle.stuck.status.level === 'exit-requested') {
      deps.failure.fail(
        new PipelineError('TWG_PIPELINE_STUCK', 'no progress with memory held; stopping'),
      );
    }
  }
  const committed = gating.committer.commitPending().catch((error: unknown) => {
    deps.failure.fail(error);
  });
  const recorded = deps.perLane.flushCoverage();
  const audited = deps.dq.flush();
  deps.perLane.dropUnwrittenQuarantine();
  return Promise.all([committed, recorded, audited]).then(() => undefined);
}
