import {
  backoffDelay,
  events,
  partitionKey,
  sleep,
  ThalwegError,
  type BackoffPolicy,
  type SourcePartition,
} from '@thalweg/connector-core';
import { PipelineError } from './errors.js';

/** Between failed commit rounds at shutdown: a broker blip must not use up the failure limit. */
const DRAIN_BACKOFF: BackoffPolicy = { baseDelayMs: 20, maxDelayMs: 1000 };

/** Stores a position: a broker commit, or a cursor saved in the offset store. */
export type CommitPosition = (partition: SourcePartition, next: number) => Promise<void>;

interface PartitionPositions {
  readonly partition: SourcePartition;
  /** Ends of the source's own batches, ascending, not yet passed by a durable position. */
  readonly boundaries: number[];
  /** The furthest boundary raw durably holds, waiting to be committed. */
  pending: number | null;
  committed: number | null;
  /** This partition's failed commits since its last success. */
  failures: number;
}

export interface CommitterStats {
  readonly commits: number;
  readonly failures: number;
  readonly consecutiveFailures: number;
  readonly dropped: number;
}

/**
 * Turns durable raw positions into committed source positions, off the ack
 * path: raw's ack lane only records the newest durable position, and commits
 * happen in the background, latest position wins, one at a time.
 *
 * Only the ends of the source's own batches are committed. The pipeline may
 * cut a source batch into smaller spans, and a file source can translate
 * only its batch boundaries into a cursor; a durable position between
 * boundaries waits for the next boundary (lag, never lead).
 *
 * A failed commit stays pending and is retried on the next round (commits
 * are idempotent, the newest wins); after `maxConsecutiveFailures` in a row
 * the committer fails loud, because a position that cannot be stored pins
 * the source and grows the replay after a restart.
 */
export class PositionCommitter {
  private readonly partitions = new Map<string, PartitionPositions>();
  private running: Promise<void> | null = null;
  private commits = 0;
  private failures = 0;
  private consecutive = 0;
  private dropped = 0;
  private fatal: PipelineError | null = null;

  constructor(
    private readonly commit: CommitPosition,
    private readonly maxConsecutiveFailures: number,
    private readonly log: (line: string) => void,
  ) {}

  /** A source batch ending at `end` was read; its end may be committed once durable. */
  boundary(partition: SourcePartition, end: number): void {
    this.entry(partition).boundaries.push(end);
  }

  /** Raw durably holds everything before `next` in `partition`. */
  durable(partition: SourcePartition, next: number): void {
    const entry = this.entry(partition);
    let reached: number | null = null;
    while (entry.boundaries.length > 0 && (entry.boundaries[0] ?? Infinity) <= next) {
      reached = entry.boundaries.shift() ?? null;
    }
    if (reached !== null && (entry.pending === null || reached > entry.pending)) {
      entry.pending = reached;
    }
  }

  /** Starts a partition at a position already committed (restart, assignment). */
  resumeAt(partition: SourcePartition, next: number): void {
    const entry = this.entry(partition);
    entry.committed = next;
  }

  /** The partition was revoked: nothing may be committed for it by this member any more. */
  forget(partition: SourcePartition): void {
    const entry = this.partitions.get(partitionKey(partition));
    if (entry?.pending != null) this.dropped += 1;
    this.partitions.delete(partitionKey(partition));
  }

  committed(partition: SourcePartition): number | null {
    return this.partitions.get(partitionKey(partition))?.committed ?? null;
  }

  hasPending(): boolean {
    for (const e of this.partitions.values()) if (e.pending !== null) return true;
    return false;
  }

  /** Commits every pending position once; single-flight. Throws once failures pass the limit. */
  commitPending(): Promise<void> {
    if (this.fatal !== null) return Promise.reject(this.fatal);
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Commits until nothing is pending (shutdown). */
  async drain(): Promise<void> {
    // Failed rounds back off: a broker blip at shutdown must not use up the
    // failure limit in a few milliseconds.
    for (let failed = 0; this.hasPending();) {
      const before = this.failures;
      await this.commitPending();
      if (this.failures > before) await sleep(backoffDelay(DRAIN_BACKOFF, ++failed));
    }
  }

  stats(): CommitterStats {
    return {
      commits: this.commits,
      failures: this.failures,
      consecutiveFailures: this.consecutive,
      dropped: this.dropped,
    };
  }

  private async round(): Promise<void> {
    for (const [key, entry] of [...this.partitions]) {
      // The list is a snapshot taken before the round's first await: a
      // partition revoked while an earlier commit ran must not be committed.
      if (this.partitions.get(key) !== entry) continue;
      const next = entry.pending;
      if (next === null) continue;
      try {
        await this.commit(entry.partition, next);
      } catch (cause) {
        this.failures += 1;
        this.consecutive += 1;
        entry.failures += 1;
        this.log(
          `commit of ${entry.partition.topic}/${entry.partition.partition} at ${next} failed ` +
            `(${this.consecutive} in a row): ${cause instanceof Error ? cause.message : String(cause)}`,
        );
        // A refusal its own code classes fatal-config (a cursor the store
        // cannot keep, a commit ahead of what was read) is the same on every
        // try: fail now rather than retry it until the limit.
        if (cause instanceof ThalwegError && cause.errorClass === 'fatal-config') {
          this.fatal = new PipelineError(
            'TWG_PIPELINE_COMMIT_FAILED',
            `the commit of ${entry.partition.topic}/${entry.partition.partition} at ${next} was refused ` +
              'and no retry can change that',
            cause,
          );
          throw this.fatal;
        }
        // Per partition too: another partition's successes reset the global
        // count, and would otherwise hide a position pinned for good.
        if (
          this.consecutive >= this.maxConsecutiveFailures ||
          entry.failures >= this.maxConsecutiveFailures
        ) {
          const failed = Math.max(this.consecutive, entry.failures);
          this.fatal = new PipelineError(
            'TWG_PIPELINE_COMMIT_FAILED',
            `${failed} position commits failed in a row; last: ` +
              `${entry.partition.topic}/${entry.partition.partition} at ${next}`,
            cause,
          );
          throw this.fatal;
        }
        continue;
      }
      this.consecutive = 0;
      entry.failures = 0;
      this.commits += 1;
      if (events.committed.active) events.committed.publish({ partition: entry.partition, next });
      // Revoked while the commit ran: the entry is gone and stays gone.
      if (this.partitions.get(key) !== entry) continue;
      entry.committed = Math.max(entry.committed ?? 0, next);
      if (entry.pending === next) entry.pending = null;
    }
  }

  private entry(partition: SourcePartition): PartitionPositions {
    const key = partitionKey(partition);
    let entry = this.partitions.get(key);
    if (entry === undefined) {
      entry = {
        partition: { topic: partition.topic, partition: partition.partition },
        boundaries: [],
        pending: null,
        committed: null,
        failures: 0,
      };
      this.partitions.set(key, entry);
    }
    return entry;
  }
}
