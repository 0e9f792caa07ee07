import { partitionKey, type SourcePartition } from '../offset-span.js';

/**
 * Who asked for a partition to stop fetching: the pipeline (its
 * backpressure), the source's own queue bound, or the source stopping after
 * a fatal error.
 */
export type PauseReason = 'pipeline' | 'queue' | 'stopped';

/**
 * The combined pause state of every partition. A partition is fetched only
 * when no reason holds it: the pipeline resuming a partition the full queue
 * still holds must not restart it, and the queue draining must not restart a
 * partition the pipeline paused. `add` and `remove` report the transitions,
 * which are the only moments the client is told.
 */
export class PauseSet {
  private readonly reasons = new Map<
    string,
    { partition: SourcePartition; by: Set<PauseReason> }
  >();

  /** True when the partition was fetched before and is paused now. */
  add(partition: SourcePartition, reason: PauseReason): boolean {
    const key = partitionKey(partition);
    const entry = this.reasons.get(key);
    if (entry === undefined) {
      this.reasons.set(key, { partition, by: new Set([reason]) });
      return true;
    }
    entry.by.add(reason);
    return false;
  }

  /** True when the partition was paused and no reason holds it any more. */
  remove(partition: SourcePartition, reason: PauseReason): boolean {
    const key = partitionKey(partition);
    const entry = this.reasons.get(key);
    if (entry?.by.delete(reason) !== true) return false;
    if (entry.by.size > 0) return false;
    this.reasons.delete(key);
    return true;
  }

  /** Removes `reason` everywhere; returns the partitions that are fetched again. */
  removeAll(reason: PauseReason): SourcePartition[] {
    const resumed: SourcePartition[] = [];
    for (const entry of [...this.reasons.values()]) {
      if (this.remove(entry.partition, reason)) resumed.push(entry.partition);
    }
    return resumed;
  }

  has(key: string, reason: PauseReason): boolean {
    return this.reasons.get(key)?.by.has(reason) === true;
  }

  count(reason: PauseReason): number {
    let n = 0;
    for (const entry of this.reasons.values()) if (entry.by.has(reason)) n += 1;
    return n;
  }

  /** Every paused partition, for any reason. */
  paused(): SourcePartition[] {
    return [...this.reasons.values()].map((e) => e.partition);
  }

  pausedBy(reason: PauseReason): SourcePartition[] {
    return [...this.reasons.values()].filter((e) => e.by.has(reason)).map((e) => e.partition);
  }
}
