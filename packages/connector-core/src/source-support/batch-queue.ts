import type { SourcePartition } from '../offset-span.js';
import type { SourceBatch } from '../source.js';

export interface QueuedBatch {
  /** `partitionKey` of the batch's partition. */
  readonly key: string;
  readonly partition: SourcePartition;
  readonly batch: SourceBatch;
  readonly bytes: number;
}

/**
 * Batches handed over by the client and not yet yielded, bounded by count
 * and bytes. The bound is not enforced by blocking the client (a blocked
 * fetch loop stops heartbeating and the member is thrown out of the group):
 * the owner (a source's reader) pauses partitions while `overBounds`, and resumes them once the
 * queue has drained to half (`drained`), so a pause/resume pair moves a
 * useful amount of data rather than one batch.
 *
 * Order is kept within a partition; `take` skips partitions the caller holds
 * back, so a held partition does not block the others.
 */
export class BatchQueue {
  private entries: QueuedBatch[] = [];
  private totalBytes = 0;

  constructor(
    private readonly maxBatches: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.entries.length;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** The fuller of the count and byte bounds, 0..1, over the batches whose partitions are not `held`. */
  fillExcept(held: (key: string) => boolean): number {
    let count = 0;
    let bytes = 0;
    for (const e of this.entries) {
      if (held(e.key)) continue;
      count += 1;
      bytes += e.bytes;
    }
    return Math.min(1, Math.max(count / this.maxBatches, bytes / this.maxBytes));
  }

  get overBounds(): boolean {
    return this.entries.length >= this.maxBatches || this.totalBytes >= this.maxBytes;
  }

  get drained(): boolean {
    return (
      this.entries.length <= Math.floor(this.maxBatches / 2) && this.totalBytes <= this.maxBytes / 2
    );
  }

  push(entry: QueuedBatch): void {
    this.entries.push(entry);
    this.totalBytes += entry.bytes;
  }

  /** Removes and returns the oldest batch of a partition not held back. */
  take(held: (key: string) => boolean): QueuedBatch | undefined {
    const i = this.entries.findIndex((e) => !held(e.key));
    if (i < 0) return undefined;
    const [entry] = this.entries.splice(i, 1);
    if (entry !== undefined) this.totalBytes -= entry.bytes;
    return entry;
  }

  /** Drops every batch of the given partitions; returns how many. */
  purge(keys: ReadonlySet<string>): number {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => !keys.has(e.key));
    this.totalBytes = this.entries.reduce((sum, e) => sum + e.bytes, 0);
    return before - this.entries.length;
  }

  clear(): void {
    this.entries = [];
    this.totalBytes = 0;
  }
}
