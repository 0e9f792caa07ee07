import type {
  Lane,
  LaneMetrics,
  ReplayableSink,
  Source,
  SourceBatch,
  SourcePartition,
} from '@thalweg/connector-core';
import type { PositionCommitter } from './position-committer.js';
import type { SecondaryLane } from './secondary-lane.js';

/** One ack lane of one of the topology's sinks, named for telemetry. */
export interface SinkLane extends LaneMetrics {
  readonly sink: string;
  readonly role: Lane;
}

/** How far the committed position of a partition is behind its log end. */
export interface PartitionLag {
  readonly partition: SourcePartition;
  /** The log end as the source last saw it. */
  readonly logEnd: number;
  readonly committed: number;
  /** Records between them (never below 0: a stale log end reads as caught up). */
  readonly lag: number;
}

/** Raw's lanes first, then each secondary's, in declaration order. */
export function sinkLanes(
  raw: ReplayableSink<SourceBatch>,
  secondaries: readonly SecondaryLane<unknown>[],
): SinkLane[] {
  const out: SinkLane[] = [];
  for (const lane of raw.lanes?.() ?? []) {
    out.push({ ...lane, sink: raw.descriptor.id, role: 'primary-raw' });
  }
  for (const s of secondaries) {
    for (const lane of s.lanes()) out.push({ ...lane, sink: s.id, role: 'secondary' });
  }
  return out;
}

/**
 * Source lag per partition: the source's log end minus what this process
 * committed. A partition with nothing committed yet by this process, or
 * whose log end the source has not seen, is left out rather than guessed.
 */
export function sourceLag(source: Source, committer: PositionCommitter): PartitionLag[] {
  const out: PartitionLag[] = [];
  for (const end of source.logEnd?.() ?? []) {
    const committed = committer.committed(end.partition);
    if (committed === null) continue;
    out.push({
      partition: end.partition,
      logEnd: end.next,
      committed,
      lag: Math.max(0, end.next - committed),
    });
  }
  return out;
}
