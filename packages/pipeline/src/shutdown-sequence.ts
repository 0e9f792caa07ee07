import type { ReplayableSink, Source, SourceBatch } from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import type { ContentDedup } from './dedup/content-dedup.js';
import type { DqAuditRecorder } from './dq/dq-audit-recorder.js';
import { PipelineError } from './errors.js';
import { reason, type FailureLatch } from './failure-latch.js';
import type { PerLane } from './per-lane.js';
import type { PositionCommitter } from './position-committer.js';
import { measureFinal, type RecoveryParts } from './recovery/recovery-wiring.js';
import type { SecondaryLane } from './secondary-lane.js';

export interface ShutdownDeps {
  readonly source: Source;
  readonly raw: ReplayableSink<SourceBatch>;
  readonly committer: PositionCommitter;
  readonly lanes: readonly SecondaryLane<unknown>[];
  readonly perLane: PerLane;
  readonly repair: RecoveryParts | null;
  readonly coverage: CoverageStore;
  readonly dq: DqAuditRecorder;
  /** Its writes to the seen-set still in flight are waited for (each bounded by its timeout). */
  readonly dedup: ContentDedup | null;
  readonly secondaryDrainMs: number;
  readonly failure: FailureLatch;
  /** Ends the flow cycle: after raw's flush, whose acknowledgements it still commits. */
  readonly stopTicking: () => void;
  readonly log: (line: string) => void;
}

/** Flushes raw; a failure fails the run (what raw confirmed before it still commits). */
export async function flushRaw(
  raw: ReplayableSink<SourceBatch>,
  failure: FailureLatch,
): Promise<void> {
  try {
    await raw.flush();
  } catch (error) {
    failure.fail(
      new PipelineError('TWG_PIPELINE_RAW_FAILED', 'primary raw failed while flushing', error),
    );
  }
}

/**
 * The shutdown sequence, in order: flush raw (its acknowledgements commit
 * the last positions), commit them, drain each secondary within its
 * deadline, write every lane's coverage, let the quarantine writers finish,
 * let content dedup's writes to its seen-set settle, measure the backlog a last time, write and close the dq-audit trail,
 * checkpoint coverage, close everything.
 * Each step runs whatever failed before it; only raw's flush and the commit
 * can fail the run.
 */
export async function shutDown(deps: ShutdownDeps): Promise<void> {
  const { raw, failure, log } = deps;
  await flushRaw(raw, failure);
  deps.stopTicking();
  try {
    // Positions of everything raw confirmed, failure or not: they are durable.
    await deps.committer.drain();
  } catch (error) {
    failure.fail(error);
  }
  await Promise.all(deps.lanes.map((l) => l.stop(deps.secondaryDrainMs)));
  if (!(await deps.perLane.drainCoverage())) {
    log('some coverage could not be recorded; those spans stay gaps');
  }
  // After the secondaries, which quarantine while they drain; within the
  // drain deadline, since a writer that never answers must not hang shutdown.
  await deps.perLane.stopQuarantine(deps.secondaryDrainMs);
  const settle = async (what: string, work: Promise<void>): Promise<void> => {
    try {
      await work;
    } catch (error) {
      log(`${what} failed: ${reason(error)}`);
    }
  };
  if (deps.dedup !== null) await settle('remember the dedup hashes', deps.dedup.settled());
  if (deps.repair !== null) {
    await settle('measure the backlog', measureFinal(deps.repair, raw, deps.coverage));
  }
  // After the secondaries and recovery, the last to derive: their outcomes are all handed over.
  await settle('close the dq-audit trail', deps.dq.close());
  await settle('checkpoint coverage', deps.coverage.checkpoint());
  await settle('close raw', raw.close());
  await settle('close source', deps.source.close());
  await settle('close coverage', deps.coverage.close());
}
