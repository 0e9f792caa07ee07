import {
  checkOffset,
  partitionKey,
  sourcePartition,
  type SourcePartition,
} from '@thalweg/connector-core';
import type { CommitOffset, CommitResult } from './consumer-port.js';
import { describePartition, KafkaSourceError } from './errors.js';

/**
 * Why a commit was not sent, or not taken:
 *
 * - `not-owned`          the partition is not in this member's current assignment;
 * - `ownership-changed`  the broker refused it (rebalance in progress, illegal
 *                        generation, unknown member): the group moved on;
 * - `not-running`        the client took the call but sent nothing (its fetch
 *                        loop had stopped: a crash or a shutdown under way);
 * - `behind`             a higher offset was already committed for the partition
 *                        while this member owned it (commits never go back);
 * - `closed`             the source was closed.
 *
 * A dropped commit costs at most a redelivery: the position stays where it
 * was, behind what is durable (lag), never ahead of it (loss).
 */
export type DroppedCommitReason =
  'not-owned' | 'ownership-changed' | 'not-running' | 'behind' | 'closed';

export interface DroppedCommit {
  readonly partition: SourcePartition;
  readonly next: number;
  readonly reason: DroppedCommitReason;
  readonly detail: string;
}

/** What `commit` did; a dropped commit resolves, it never looks like a failure to retry. */
export type CommitOutcome =
  | { readonly kind: 'committed' }
  | { readonly kind: 'dropped'; readonly reason: DroppedCommitReason; readonly detail: string };

export interface CommitStats {
  /** Partition positions the broker took. */
  readonly commits: number;
  /** Commit requests sent (one request carries every partition waiting). */
  readonly commitRequests: number;
  readonly droppedCommits: Readonly<Record<DroppedCommitReason, number>>;
  /** Commits waiting for the group to settle or for the request in flight. */
  readonly pendingCommits: number;
}

interface Waiter {
  readonly next: number;
  readonly resolve: (outcome: CommitOutcome) => void;
  readonly reject: (error: Error) => void;
}

interface Pending {
  readonly partition: SourcePartition;
  readonly waiters: Waiter[];
}

/**
 * `live`: commits are checked against `owned` and sent. `joining`: a rejoin
 * started, the client may already carry the next generation while `owned`
 * still lists the previous assignment, so commits wait. `joined`: the new
 * assignment is known but the fetch loop has not run yet (kafkajs drops
 * commits silently until it does), so commits still wait.
 */
type Phase = 'live' | 'joining' | 'joined';

const COMMITTED: CommitOutcome = Object.freeze({ kind: 'committed' });

/**
 * The only way a group-mode commit reaches the broker. kafkajs commits
 * whatever it is given with its current generation, including partitions
 * this member no longer owns (kafkajs#1046), so every commit is checked here
 * against the assignment of the last join, after the client has started
 * fetching for it, and commits arriving during a rejoin wait for its outcome.
 *
 * Commits are coalesced and serialised: one request at a time carries the
 * highest `next` waiting per partition, so a partition's committed offset only
 * moves forward while this member owns it.
 */
export class CommitGate {
  private owned = new Map<string, SourcePartition>();
  private committed = new Map<string, number>();
  private pending = new Map<string, Pending>();
  private phase: Phase = 'live';
  private flushing = false;
  private ended: { reason: 'closed' | 'not-running'; detail: string } | null = null;
  private commits = 0;
  private commitRequests = 0;
  private readonly dropped: Record<DroppedCommitReason, number> = {
    'not-owned': 0,
    'ownership-changed': 0,
    'not-running': 0,
    behind: 0,
    closed: 0,
  };

  constructor(
    private readonly send: (offsets: readonly CommitOffset[]) => Promise<CommitResult>,
    /** The end of the last batch yielded for a partition in its current ownership. */
    private readonly readEnd: (partition: SourcePartition) => number | undefined,
    private readonly onDropped: ((dropped: DroppedCommit) => void) | undefined,
    private readonly log: (line: string) => void,
  ) {}

  commit(partition: SourcePartition, next: number): Promise<CommitOutcome> {
    let at: SourcePartition;
    try {
      at = sourcePartition(partition.topic, partition.partition);
      checkOffset(next, 'next');
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const end = this.readEnd(at);
    if (end !== undefined && next > end) {
      // A position may lag what was read, never lead it (ADR 0001). kafkajs
      // would also move its fetch position there, and past the log end it
      // resets the partition and commits the reset on its own.
      return Promise.reject(
        new KafkaSourceError(
          'TWG_KAFKA_COMMIT_AHEAD',
          `${describePartition(at)}: next ${next} is beyond ${end}, the end of what this member ` +
            'has yielded; committing it would skip records nobody read',
          { partition: at },
        ),
      );
    }
    if (this.ended !== null) {
      return Promise.resolve(this.drop(at, next, this.ended.reason, this.ended.detail));
    }
    return new Promise<CommitOutcome>((resolve, reject) => {
      const key = partitionKey(at);
      let entry = this.pending.get(key);
      if (entry === undefined) {
        entry = { partition: at, waiters: [] };
        this.pending.set(key, entry);
      }
      entry.waiters.push({ next, resolve, reject });
      this.kick();
    });
  }

  /** A rejoin started (or the client crashed and will rejoin): hold commits. */
  joinStarting(): void {
    if (this.phase === 'live' || this.phase === 'joined') this.phase = 'joining';
  }

  /**
   * The new assignment. A partition this member keeps keeps its monotonic
   * floor (stricter than per generation: what we committed stays committed);
   * a partition that left forgets it, since another member owns its position now.
   */
  joined(assignment: readonly SourcePartition[]): void {
    this.owned = new Map(assignment.map((p) => [partitionKey(p), p]));
    for (const key of [...this.committed.keys()]) {
      if (!this.owned.has(key)) this.committed.delete(key);
    }
    this.phase = 'joined';
  }

  /** The fetch loop runs for the current assignment: commits are sent again. */
  fetching(): void {
    if (this.phase !== 'joined') return;
    this.phase = 'live';
    this.kick();
  }

  /** No commit will ever be sent again; everything waiting is dropped. */
  end(reason: 'closed' | 'not-running', detail: string): void {
    this.ended ??= { reason, detail };
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const entry of waiting) {
      for (const w of entry.waiters) {
        w.resolve(this.drop(entry.partition, w.next, this.ended.reason, this.ended.detail));
      }
    }
  }

  assignment(): SourcePartition[] {
    return [...this.owned.values()];
  }

  stats(): CommitStats {
    let pendingCommits = 0;
    for (const entry of this.pending.values()) pendingCommits += entry.waiters.length;
    return {
      commits: this.commits,
      commitRequests: this.commitRequests,
      droppedCommits: { ...this.dropped },
      pendingCommits,
    };
  }

  private kick(): void {
    if (this.flushing || this.phase !== 'live' || this.pending.size === 0) return;
    this.flushing = true;
    void this.flush().finally(() => {
      this.flushing = false;
      // A commit that arrived while the last request was finishing.
      this.kick();
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.size > 0 && this.phase === 'live' && this.ended === null) {
      const work = [...this.pending.values()];
      this.pending.clear();
      const batch: { key: string; partition: SourcePartition; next: number; waiters: Waiter[] }[] =
        [];
      for (const entry of work) {
        const key = partitionKey(entry.partition);
        if (!this.owned.has(key)) {
          this.dropAll(
            entry.partition,
            entry.waiters,
            'not-owned',
            `${describePartition(entry.partition)} is not in this member's assignment`,
          );
          continue;
        }
        const done = this.committed.get(key);
        const ahead: Waiter[] = [];
        for (const w of entry.waiters) {
          if (done === undefined || w.next > done) ahead.push(w);
          else if (w.next === done) w.resolve(COMMITTED);
          else {
            w.resolve(
              this.drop(
                entry.partition,
                w.next,
                'behind',
                `${describePartition(entry.partition)} already committed ${done}`,
              ),
            );
          }
        }
        if (ahead.length === 0) continue;
        const next = Math.max(...ahead.map((w) => w.next));
        batch.push({ key, partition: entry.partition, next, waiters: ahead });
      }
      if (batch.length > 0) await this.sendBatch(batch);
    }
  }

  private async sendBatch(
    batch: readonly { key: string; partition: SourcePartition; next: number; waiters: Waiter[] }[],
  ): Promise<void> {
    const offsets = batch.map((b) => ({
      topic: b.partition.topic,
      partition: b.partition.partition,
      next: b.next,
    }));
    let result: CommitResult;
    try {
      this.commitRequests += 1;
      result = await this.send(offsets);
    } catch (cause) {
      const list = batch.map((b) => `${describePartition(b.partition)}@${b.next}`).join(', ');
      const error = new KafkaSourceError(
        'TWG_KAFKA_COMMIT_FAILED',
        `commit of ${list} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
      for (const b of batch) for (const w of b.waiters) w.reject(error);
      return;
    }
    if (result.kind === 'applied') {
      for (const b of batch) {
        // Revoked during the request: the partition's position is another member's now.
        if (this.owned.has(b.key)) {
          this.committed.set(b.key, Math.max(this.committed.get(b.key) ?? 0, b.next));
        }
        this.commits += 1;
        for (const w of b.waiters) w.resolve(COMMITTED);
      }
      return;
    }
    for (const b of batch) this.dropAll(b.partition, b.waiters, result.kind, result.detail);
  }

  private dropAll(
    partition: SourcePartition,
    waiters: readonly Waiter[],
    reason: DroppedCommitReason,
    detail: string,
  ): void {
    for (const w of waiters) w.resolve(this.drop(partition, w.next, reason, detail));
  }

  private drop(
    partition: SourcePartition,
    next: number,
    reason: DroppedCommitReason,
    detail: string,
  ): CommitOutcome {
    this.dropped[reason] += 1;
    try {
      this.onDropped?.({ partition, next, reason, detail });
    } catch (error) {
      // The hook only observes; its failure must not turn a drop into an error
      // the caller would retry, so it is logged and the outcome stands.
      this.log(`onDroppedCommit threw: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { kind: 'dropped', reason, detail };
  }
}
