import type { Cancel, SourcePartition } from '@thalweg/connector-core';
import type { ReadSettings, ReaderSession } from './pulsar-port.js';
import type { PulsarPartitionStats } from './subscription-lane.js';

/** Plain data, for tests and telemetry. */
export interface PulsarReaderStats {
  readonly messages: number;
  readonly batches: number;
  /** Flow tokens handed back to the readers. */
  readonly released: number;
  readonly reconnects: number;
  readonly sessionsOpen: number;
  readonly partitions: readonly PulsarPartitionStats[];
}

/** The last message of a yielded batch: where a cursor can point. */
export interface Mark {
  readonly offset: number;
  readonly messageId: string;
}

/** Marks kept per partition before the oldest are dropped (a cursor then lags, never leads). */
const MAX_MARKS = 65_536;

export interface Lane {
  readonly partition: SourcePartition;
  readonly topic: string;
  session: ReaderSession | null;
  generation: number;
  /** Where the next session starts: the sought cursor, then the last message yielded. */
  start: ReadSettings['start'];
  /** Messages below this are not taken: one past the last received (or the sought cursor). */
  floor: number;
  /** One past the last message yielded (or the sought cursor): the floor of a new session. */
  resumeFloor: number;
  /** Yielded while paused: their tokens go back on resume. */
  owed: string[];
  marks: Mark[];
  /** The newest mark a cursor was taken at, or the sought cursor. */
  base: Mark | null;
  attempts: number;
  cancelReopen: Cancel | undefined;
  lastOffset: number | null;
}

/** A lane not read yet: from the source's start, nothing yielded or sought. */
export function newReaderLane(
  partition: SourcePartition,
  topic: string,
  startAt: 'earliest' | 'latest',
): Lane {
  return {
    partition,
    topic,
    session: null,
    generation: 0,
    start: { kind: startAt },
    floor: 0,
    resumeFloor: 0,
    owed: [],
    marks: [],
    base: null,
    attempts: 0,
    cancelReopen: undefined,
    lastOffset: null,
  };
}

/** Keeps `m` (a yielded batch's last message) as a place a cursor can point; the oldest go past MAX_MARKS. */
export function mark(lane: Lane, m: Mark): void {
  lane.marks.push(m);
  if (lane.marks.length > MAX_MARKS) lane.base = lane.marks.shift() ?? lane.base;
}

/**
 * Moves the lane's base to the newest mark below `next` and forgets the
 * marks before it; returns the base (null: nothing yielded or sought).
 */
export function advanceBase(lane: Lane, next: number): Mark | null {
  let i = -1;
  while (i + 1 < lane.marks.length && (lane.marks[i + 1]?.offset ?? next) < next) i += 1;
  if (i >= 0) {
    lane.base = lane.marks[i] ?? null;
    lane.marks.splice(0, i + 1);
  }
  return lane.base;
}
