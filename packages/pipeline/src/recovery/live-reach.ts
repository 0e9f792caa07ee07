import { partitionKey, type Clock, type SourcePartition } from '@thalweg/connector-core';

interface Reading {
  /** The end of the last piece offered to the lanes; null before the first one. */
  at: number | null;
  /** When live ingest last showed progress here (taken, positioned or offered a piece). */
  movedAt: number;
}

/**
 * How far live ingest has got in each partition this member reads, in the
 * `both` role: from there on, the source will read every offset again and
 * offer it to each running secondary lane, so recovery leaves a gap at or
 * above it to the lane instead of replaying it beside it (ADR 0030). After
 * a crash the source resumes at its committed position, behind raw, and
 * re-reads what raw already holds: without this, recovery would plan those
 * very gaps at once and both would write them.
 *
 * It only ever withholds work from recovery for a while, never for good:
 * - a gap below `at` was offered already (delivered, shed or covered), so
 *   recovery repairs whatever of it is still missing;
 * - a revoked partition, one this member was not assigned, and every
 *   partition once ingest ended, are recovery's again;
 * - a partition where live ingest has not moved for `graceMs` (not yet read
 *   after its assignment, paused, stalled) is recovery's again: before its
 *   first batch this process does not know where a broker-managed partition
 *   resumes, and one that stays at the end of its log never sends one.
 */
export class LiveReach {
  private readonly partitions = new Map<string, Reading>();
  /** Revoked and not taken again: never left to live. */
  private readonly revoked = new Set<string>();
  /** An `assigned` event was seen: partitions not in `partitions` are another member's. */
  private assignmentKnown = false;
  private ended = false;
  private readonly openedAt: number;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
  ) {
    this.openedAt = clock.now();
  }

  /** A store-managed partition resumes at `next` (its stored cursor, or 0): known at open. */
  resumeAt(partition: SourcePartition, next: number): void {
    this.partitions.set(partitionKey(partition), { at: next, movedAt: this.clock.now() });
  }

  /** The source took `partition`; where it resumes is known at its first batch. */
  assigned(partition: SourcePartition): void {
    const key = partitionKey(partition);
    this.assignmentKnown = true;
    this.revoked.delete(key);
    this.partitions.set(key, { at: null, movedAt: this.clock.now() });
  }

  /** The source gave `partition` up: nothing of it will be read here again. */
  revokedFrom(partition: SourcePartition): void {
    const key = partitionKey(partition);
    this.partitions.delete(key);
    this.revoked.add(key);
  }

  /** A piece ending at `end` was offered to every lane (after raw accepted it). */
  offered(partition: SourcePartition, end: number): void {
    const key = partitionKey(partition);
    if (this.revoked.has(key)) return;
    this.partitions.set(key, { at: end, movedAt: this.clock.now() });
  }

  /** Ingest ended (source ended, stop, failure): nothing more will be offered. */
  end(): void {
    this.ended = true;
  }

  /**
   * The offset from which live ingest will still offer `partition` itself,
   * or null when it will not (recovery owns every gap of it). Zero while
   * it is taken, or may be, and its resume position is not known yet.
   */
  floor(partition: SourcePartition): number | null {
    if (this.ended) return null;
    const key = partitionKey(partition);
    if (this.revoked.has(key)) return null;
    const now = this.clock.now();
    const reading = this.partitions.get(key);
    if (reading === undefined) {
      // Not (yet) seen: perhaps this member's, before its first assignment.
      return this.assignmentKnown || now - this.openedAt > this.graceMs ? null : 0;
    }
    if (now - reading.movedAt > this.graceMs) return null;
    return reading.at ?? 0;
  }
}
