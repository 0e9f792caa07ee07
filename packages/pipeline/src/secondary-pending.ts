import { partitionKey, type OffsetSpan, type SourcePartition } from '@thalweg/connector-core';

/**
 * The spans one secondary lane may still deliver on its own: queued, or
 * submitted to its sink and not confirmed. Recovery asks for the lowest of a
 * partition (`floor`) and leaves offsets from there on to the live lane, so
 * a batch in flight is not replayed beside it.
 */
export class PendingSpans {
  /** Starts of spans queued or submitted and not yet confirmed, per partition, with counts. */
  private readonly starts = new Map<string, Map<number, number>>();
  /** Per partition, the spans the lane submitted and saw no confirmation of yet, in order. */
  private readonly unconfirmed = new Map<string, OffsetSpan[]>();

  /** A span the lane queued. */
  hold(span: OffsetSpan): void {
    const key = partitionKey(span);
    let starts = this.starts.get(key);
    if (starts === undefined) this.starts.set(key, (starts = new Map<number, number>()));
    starts.set(span.start, (starts.get(span.start) ?? 0) + 1);
  }

  /** A held span the lane is handing to its sink. */
  submitting(span: OffsetSpan): void {
    const key = partitionKey(span);
    let own = this.unconfirmed.get(key);
    if (own === undefined) this.unconfirmed.set(key, (own = []));
    own.push(span);
  }

  /**
   * Settles a confirmed span and, when it is one the lane submitted, every
   * span of the partition it submitted earlier: a sink confirms in order, so
   * those were settled without a confirmation (a gap, e.g. PostgreSQL's
   * `onPoison: 'skip'`). Left pending, one of them would pin `floor` for
   * good and hide every later gap of the partition from recovery.
   */
  settleThrough(span: OffsetSpan): void {
    const own = this.unconfirmed.get(partitionKey(span));
    const at = own?.findIndex((s) => s.start === span.start && s.end === span.end) ?? -1;
    if (own !== undefined && at >= 0) {
      for (const earlier of own.splice(0, at + 1).slice(0, at)) this.settle(earlier);
    }
    this.settle(span);
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

  /** The lane failed: nothing of it is pending any more. */
  clear(): void {
    this.starts.clear();
    this.unconfirmed.clear();
  }
}
