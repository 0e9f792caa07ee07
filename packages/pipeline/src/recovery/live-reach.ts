import { partitionKey, type Clock, type SourcePartition } from '@thalweg/connector-core';

interface Reading {
  /** Where the source resumed, or the end of the last piece offered to the lanes. */
  readonly at: number;
  /** When live ingest last showed progress here (positioned, or offered a piece). */
  readonly movedAt: number;
}

/**
 * How far live ingest has got in each partition this member reads, in the
 * `both` role: from there on, the source will read every offset again and
 * offer it to each running secondary lane, so recovery leaves a gap at or
 * above it to the lane instead of replaying it beside it (ADR 0030). After
 * a crash the source resumes at its committed position, behind raw, and
 * re-reads what raw already holds; once this process has seen where, the
 * gaps from there on are the live lane's.
 *
 * It only ever withholds work from recovery for a while, never for good:
 * - a gap below `at` was offered already (delivered, shed or covered), so
 *   recovery repairs whatever of it is still missing;
 * - a partition whose position is not known here yet (a broker-managed one
 *   before its first piece: the group's committed offset is not ours to
 *   read), a revoked one, and every partition once ingest ended, are
 *   recovery's; what recovery is replaying then, the live lane skips
 *   (CoveredSpans.claim) instead;
 * - a partition where live ingest has not moved for `graceMs` (paused,
 *   stalled) is recovery's again.
 */
export class LiveReach {
  private readonly partitions = new Map<string, Reading>();
  /** Revoked and not taken again: a piece of the old assignment moves nothing. */
  private readonly revoked = new Set<string>();
  private ended = false;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
  ) {}

  /** A store-managed partition resumes at `next` (its stored cursor, or 0): known at open. */
  resumeAt(partition: SourcePartition, next: number): void {
    this.partitions.set(partitionKey(partition), { at: next, movedAt: this.clock.now() });
  }

  /** The source took `partition`; where it resumes is known at its first piece. */
  assigned(partition: SourcePartition): void {
    this.revoked.delete(partitionKey(partition));
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

  /** The offset from which live ingest will still offer `partition` itself, or null (recovery's). */
  floor(partition: SourcePartition): number | null {
    if (this.ended) return null;
    const reading = this.partitions.get(partitionKey(partition));
    if (reading === undefined) return null;
    if (this.clock.now() - reading.movedAt > this.graceMs) return null;
    return reading.at;
  }
}
