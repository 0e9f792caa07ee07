import {
  partitionKey,
  type OffsetSpan,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';

/**
 * The spans one secondary lane may still deliver on its own: queued, or
 * submitted to its sink and not confirmed. Recovery asks for the lowest of a
 * partition (`floor`) and leaves offsets from there on to the live lane, so
 * a batch in flight is not replayed beside it.
 *
 * A submitted span keeps its records (the raw batch, less what the
 * derivation already quarantined) until it settles: a sink that refuses
 * the batch, or sets it aside later, leaves the lane the records to
 * quarantine. What is held is bounded by the sink's own queue.
 */
export class PendingSpans {
  /** Starts of spans queued or submitted and not yet confirmed, per partition, with counts. */
  private readonly starts = new Map<string, Map<number, number>>();
  /** Per partition, the batches the lane submitted and saw no settlement of yet, in order. */
  private readonly unconfirmed = new Map<string, SourceBatch[]>();

  /** A span the lane queued. */
  hold(span: OffsetSpan): void {
    const key = partitionKey(span);
    let starts = this.starts.get(key);
    if (starts === undefined) this.starts.set(key, (starts = new Map<number, number>()));
    starts.set(span.start, (starts.get(span.start) ?? 0) + 1);
  }

  /** A held span the lane is handing to its sink, with the records it submits for it. */
  submitting(batch: SourceBatch): void {
    const key = partitionKey(batch.span);
    let own = this.unconfirmed.get(key);
    if (own === undefined) this.unconfirmed.set(key, (own = []));
    own.push(batch);
  }

  /**
   * Settles a span the sink confirmed or set aside and, when it is one the
   * lane submitted, every span of the partition it submitted earlier: a sink
   * settles in order, so those were settled without a word (a sink that
   * cannot say why). Left pending, one of them would pin `floor` for good
   * and hide every later gap of the partition from recovery. Returns the
   * span's own batch, or null when the lane did not submit it (a replay).
   */
  settleThrough(span: OffsetSpan): SourceBatch | null {
    const own = this.unconfirmed.get(partitionKey(span));
    const at = own?.findIndex((b) => sameSpan(b.span, span)) ?? -1;
    let found: SourceBatch | null = null;
    if (own !== undefined && at >= 0) {
      const settled = own.splice(0, at + 1);
      found = settled.pop() ?? null;
      for (const earlier of settled) this.settle(earlier.span);
    }
    this.settle(span);
    return found;
  }

  /** The sink refused the span the lane just submitted: its batch, settled. */
  refused(span: OffsetSpan): SourceBatch | null {
    const own = this.unconfirmed.get(partitionKey(span));
    const at = own?.findLastIndex((b) => sameSpan(b.span, span)) ?? -1;
    const found = own !== undefined && at >= 0 ? (own.splice(at, 1)[0] ?? null) : null;
    this.settle(span);
    return found;
  }

  /** A held span that will not be delivered by the lane (shed, or covered by quarantine). */
  settle(span: OffsetSpan): void {
    const starts = this.starts.get(partitionKey(span));
    const n = starts?.get(span.start);
    if (starts === undefined || n === undefined) return;
    if (n <= 1) starts.delete(span.start);
    else starts.set(span.start, n - 1);
  }

  /** The lowest start pending in `partition`, or null when nothing is. */
  floor(partition: SourcePartition): number | null {
    const starts = this.starts.get(partitionKey(partition));
    if (starts === undefined || starts.size === 0) return null;
    return Math.min(...starts.keys());
  }

  /** Batches submitted and not yet settled, over every partition. */
  get unsettled(): number {
    let n = 0;
    for (const own of this.unconfirmed.values()) n += own.length;
    return n;
  }

  /** The lane failed: nothing of it is pending any more. */
  clear(): void {
    this.starts.clear();
    this.unconfirmed.clear();
  }
}

/** Spans of one partition (the maps are keyed by it) with the same bounds. */
function sameSpan(a: OffsetSpan, b: OffsetSpan): boolean {
  return a.start === b.start && a.end === b.end;
}
