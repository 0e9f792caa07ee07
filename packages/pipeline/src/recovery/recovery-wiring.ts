import { hostname } from 'node:os';
import {
  isDurable,
  type Clock,
  type ReplayableSink,
  type Sink,
  type SinkId,
  type SourceBatch,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import type { CoverageRecorder } from '../coverage-recorder.js';
import type { PipelineConfig } from '../pipeline-config.js';
import type { QuarantineRouter } from '../quarantine-router.js';
import { emptyReceipt, type SecondaryLane } from '../secondary-lane.js';
import type { PipelineSpec } from '../topology.js';
import { RecoveryRunner } from './recovery-runner.js';
import type { ReplayTarget } from './replay-window.js';

/**
 * Raw's coverage is recorded from its receipts off the ack path, so a crash
 * between raw's durable write and that record leaves it lagging what raw
 * holds. Raw itself knows exactly: merge that in at open (it is durable by
 * construction), so every reader of the store sees what raw really has.
 */
export async function reconcileRawCoverage(
  raw: ReplayableSink<SourceBatch>,
  coverage: CoverageStore,
): Promise<void> {
  const held = await raw.held();
  const deltas = held
    .filter((h) => h.spans.length > 0)
    .map((h) => ({
      key: { sink: raw.descriptor.id, topic: h.partition.topic, partition: h.partition.partition },
      ranges: h.spans.map((s) => ({ start: s.start, end: s.end })),
    }));
  if (deltas.length > 0) await coverage.merge(deltas);
}

export interface RecoveryWiring {
  readonly spec: PipelineSpec;
  readonly config: PipelineConfig;
  readonly raw: ReplayableSink<SourceBatch>;
  readonly sinks: readonly Sink<'secondary', unknown>[];
  readonly lanes: readonly SecondaryLane<unknown>[];
  readonly coverage: CoverageStore;
  readonly recorder: CoverageRecorder;
  readonly quarantine: QuarantineRouter;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}

/** Recovery drives the same sinks and derivations; non-durable secondaries opted out of it. */
export function openRecoveryRunner(w: RecoveryWiring): RecoveryRunner {
  const targets = new Map<SinkId, ReplayTarget<unknown>>();
  const laneOf = new Map<SinkId, SecondaryLane<unknown>>();
  w.sinks.forEach((sink, i) => {
    const derive = w.spec.secondaries?.[i]?.derive;
    const lane = w.lanes[i];
    if (derive === undefined || !isDurable(sink.descriptor.durability)) return;
    targets.set(sink.descriptor.id, { sink, derive });
    if (lane !== undefined) laneOf.set(sink.descriptor.id, lane);
  });
  const config = w.config.recovery;
  return new RecoveryRunner({
    raw: w.raw,
    coverage: w.coverage,
    targets,
    recorder: w.recorder,
    leases: w.spec.leases,
    holder: config.holder ?? `${hostname()}:${process.pid}`,
    config,
    maxRecordBytes: w.config.maxRecordBytes,
    clock: w.clock,
    quarantine: (sink, batch, note) => {
      w.quarantine.offer(sink, batch, note);
    },
    recordEmpty: (sink, span) => {
      const durability = targets.get(sink)?.sink.descriptor.durability;
      if (durability !== undefined && isDurable(durability)) {
        w.recorder.add(emptyReceipt(sink, span, durability.kind));
      }
    },
    // In the recovery role there is no live lane; in both, it owns what it holds.
    liveFloor: (sink, partition) =>
      config.role === 'recovery' ? null : (laneOf.get(sink)?.pendingFloor(partition) ?? null),
    log: w.log,
  });
}
