import type { Cancel, SourcePartition } from '@thalweg/connector-core';
import type { ConsumerSession, PulsarMessage } from './pulsar-port.js';

/** Why a commit acknowledged nothing: the partition is not owned now, or the source was closed. */
export type PulsarDroppedCommitReason = 'not-owned' | 'closed';

export interface PulsarPartitionStats {
  readonly topic: string;
  readonly partition: number;
  /** The offset of the last message received, null before any. */
  readonly lastOffset: number | null;
}

/** Plain data, for tests and telemetry. */
export interface PulsarSubscriptionStats {
  readonly messages: number;
  readonly batches: number;
  readonly acksSent: number;
  readonly droppedCommits: Readonly<Record<PulsarDroppedCommitReason, number>>;
  readonly epochResets: number;
  readonly reconnects: number;
  readonly sessionsOpen: number;
  readonly partitions: readonly PulsarPartitionStats[];
}

export interface Delivered {
  readonly offset: number;
  readonly messageId: string;
  /** The session that delivered it: an ack belongs to its session. */
  readonly session: ConsumerSession;
}

/** One partition of a subscription: its session, its permits, what it yielded and has not acknowledged. */
export interface Lane {
  readonly partition: SourcePartition;
  readonly topic: string;
  session: ConsumerSession | null;
  /** The current session's token: events of an older one are ignored. */
  generation: number;
  /** Reported assigned and not revoked since. */
  owned: boolean;
  /** Permits granted to the session and not used yet. */
  granted: number;
  /** One past the last offset taken in this epoch (queued or yielded), null at its start. */
  acceptedEnd: number | null;
  /** Yielded and not acknowledged, in offset order. */
  unacked: Delivered[];
  /** Messages held back after one arrived below `acceptedEnd`, until the epoch reset. */
  held: PulsarMessage[] | null;
  attempts: number;
  cancelReopen: Cancel | undefined;
  lastOffset: number | null;
}

/** A partition found, before its first session. */
export function newLane(partition: SourcePartition, topic: string): Lane {
  return {
    partition,
    topic,
    session: null,
    generation: 0,
    owned: false,
    granted: 0,
    acceptedEnd: null,
    unacked: [],
    held: null,
    attempts: 0,
    cancelReopen: undefined,
    lastOffset: null,
  };
}

/** Removes and returns what `commit(next)` acknowledges: the yielded messages below `next`, in order. */
export function acksBelow(lane: Lane, next: number): Delivered[] {
  let n = 0;
  while (n < lane.unacked.length && (lane.unacked[n]?.offset ?? next) < next) n += 1;
  return lane.unacked.splice(0, n);
}
