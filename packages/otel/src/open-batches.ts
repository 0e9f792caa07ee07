import { partitionKey, type OffsetSpan, type SourcePartition } from '@thalweg/connector-core';

/** One source batch whose span is open, with what the tracer keeps for it. */
export interface OpenBatch<T> {
  readonly span: OffsetSpan;
  readonly value: T;
}

/**
 * The source batches read and not yet committed, by partition in read
 * order, at most `max` of them. A batch whose commit never comes (its
 * partition revoked, the run stopped, an event lost) must not hold memory
 * forever: past `max` the oldest batch is let go and counted.
 *
 * Per partition the list is short (what is in flight between a read and
 * the commit that covers it), so lookups and commits scan it.
 */
export class OpenBatches<T> {
  private readonly byPartition = new Map<string, OpenBatch<T>[]>();
  /** Every open batch in read order, for letting the oldest go. */
  private readonly order = new Set<OpenBatch<T>>();
  private evictedCount = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.order.size;
  }

  /** Batches let go because `max` were open. */
  get evicted(): number {
    return this.evictedCount;
  }

  /** Opens a batch; returns the batch let go to make room, if any. */
  add(span: OffsetSpan, value: T): OpenBatch<T> | undefined {
    let oldest: OpenBatch<T> | undefined;
    if (this.order.size >= this.max) {
      oldest = this.order.values().next().value;
      if (oldest !== undefined) {
        this.remove(oldest);
        this.evictedCount += 1;
      }
    }
    const batch = { span, value };
    const key = partitionKey(span);
    const list = this.byPartition.get(key);
    if (list === undefined) this.byPartition.set(key, [batch]);
    else list.push(batch);
    this.order.add(batch);
    return oldest;
  }

  /** The open batches of `partition` whose span overlaps `[start, end)`. */
  overlapping(partition: SourcePartition, start: number, end: number): OpenBatch<T>[] {
    const list = this.byPartition.get(partitionKey(partition)) ?? [];
    return list.filter((b) => b.span.start < end && start < b.span.end);
  }

  /** Closes and returns the batches of `partition` wholly before `next`. */
  commit(partition: SourcePartition, next: number): OpenBatch<T>[] {
    const key = partitionKey(partition);
    const list = this.byPartition.get(key);
    if (list === undefined) return [];
    // After a rebalance a partition can be read again from an earlier
    // offset, so the list is not always in offset order: filter, not slice.
    const done = list.filter((b) => b.span.end <= next);
    if (done.length === 0) return [];
    const left = list.filter((b) => b.span.end > next);
    if (left.length === 0) this.byPartition.delete(key);
    else this.byPartition.set(key, left);
    for (const b of done) this.order.delete(b);
    return done;
  }

  /** Closes and returns every open batch. */
  drain(): OpenBatch<T>[] {
    const all = [...this.order];
    this.order.clear();
    this.byPartition.clear();
    return all;
  }

  private remove(batch: OpenBatch<T>): void {
    this.order.delete(batch);
    const key = partitionKey(batch.span);
    const list = this.byPartition.get(key);
    if (list === undefined) return;
    // The oldest of all is the oldest of its partition: the usual case is O(1).
    if (list[0] === batch) list.shift();
    else {
      const at = list.indexOf(batch);
      if (at >= 0) list.splice(at, 1);
    }
    if (list.length === 0) this.byPartition.delete(key);
  }
}
