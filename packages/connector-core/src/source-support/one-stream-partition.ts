import { samePartition, sourcePartition, type SourcePartition } from '../offset-span.js';
import type { SourceCursor } from '../source-cursor.js';
import type { SourceBatch } from '../source.js';
import { StreamFeed, type StreamFeedOptions } from './stream-feed.js';

/**
 * Which rule a call broke, so each source raises its own error class and
 * code: a foreign partition, a seek after `batches()` started or a second
 * `batches()` is a call out of order; a cursor of the wrong kind or a bad
 * offset is a stored cursor the source cannot resume from.
 */
export type OneStreamFault =
  | { readonly kind: 'state' }
  | { readonly kind: 'cursor'; readonly field: 'cursor.kind' | 'cursor.nextOffset' | 'next' };

export interface OneStreamPartitionOptions extends Omit<StreamFeedOptions, 'partition'> {
  /** The topic of the one partition `{ topic, partition: 0 }`. */
  readonly topic: string;
  /** Whether the stream resumes from a `stream-token` cursor (else a `log-offset` one). */
  readonly resumable: boolean;
  /** The source's own error for a broken rule; the message is the same for every source. */
  readonly fail: (fault: OneStreamFault, message: string) => Error;
}

/**
 * The partition side of a store-managed, non-replayable source that reads
 * one stream as one partition `{ topic, partition: 0 }`: it owns the
 * partition and the `StreamFeed`, passes the pipeline's pause, resume and
 * prefetch fill through to the feed, and keeps the cursor rules.
 *
 * A resumable stream's cursor is a `stream-token` (the source's token for
 * the stream, and the next row); a non-resumable one's a `log-offset`, so
 * a new stream's rows are numbered from it and offsets never repeat across
 * runs. What the token means (a stream's name, a producer's id) stays with
 * the source; this class only checks the kind, the offset and the order of
 * calls. The source keeps its transport and delegates to this class.
 */
export class OneStreamPartition {
  readonly partition: SourcePartition;
  readonly feed: StreamFeed;
  private readonly resumable: boolean;
  private readonly fail: (fault: OneStreamFault, message: string) => Error;

  constructor(options: OneStreamPartitionOptions) {
    const { topic, resumable, fail, ...feed } = options;
    this.partition = sourcePartition(topic, 0);
    this.feed = new StreamFeed({ ...feed, partition: this.partition });
    this.resumable = resumable;
    this.fail = fail;
  }

  partitions(): readonly SourcePartition[] {
    return [this.partition];
  }

  /**
   * Checks a stored cursor for `partition` and returns its next row. It must
   * come before `batches()` started and be of the stream's kind; `checkToken`
   * (the source's rule for a `stream-token`) runs before the offset is
   * checked. The source stores the token and the offset itself.
   */
  seek(
    partition: SourcePartition,
    cursor: SourceCursor,
    checkToken?: (token: string) => void,
  ): number {
    this.own(partition);
    if (this.feed.started) throw this.fail({ kind: 'state' }, 'seek after batches() started');
    const want = this.resumable ? 'stream-token' : 'log-offset';
    if (cursor.kind !== want) {
      throw this.fail(
        { kind: 'cursor', field: 'cursor.kind' },
        `a ${cursor.kind} cursor; this ${this.resumable ? 'resumable' : 'non-resumable'} stream resumes from a ${want} cursor`,
      );
    }
    if (cursor.kind === 'stream-token') checkToken?.(cursor.token);
    if (!Number.isSafeInteger(cursor.nextOffset) || cursor.nextOffset < 0) {
      throw this.fail(
        { kind: 'cursor', field: 'cursor.nextOffset' },
        `${cursor.nextOffset} is not a row offset`,
      );
    }
    return cursor.nextOffset;
  }

  /**
   * The cursor to store for `partition` at `next` (a row offset: refused
   * otherwise); `token` is used only when resumable.
   */
  cursorAt(partition: SourcePartition, next: number, token: string): SourceCursor {
    this.own(partition);
    if (!Number.isSafeInteger(next) || next < 0) {
      throw this.fail({ kind: 'cursor', field: 'next' }, `${next} is not a row offset`);
    }
    return this.resumable
      ? { kind: 'stream-token', token, nextOffset: next }
      : { kind: 'log-offset', nextOffset: next };
  }

  /** The feed's batches, pumped by `pump`; a second call is a call out of order. */
  async *batches(signal: AbortSignal, pump: () => Promise<void>): AsyncGenerator<SourceBatch> {
    if (this.feed.started) throw this.fail({ kind: 'state' }, 'batches() called twice');
    yield* this.feed.batches(signal, pump);
  }

  pause(partitions: readonly SourcePartition[]): void {
    this.feed.pause(partitions);
  }

  resume(partitions: readonly SourcePartition[]): void {
    this.feed.resume(partitions);
  }

  prefetchFill(): number {
    return this.feed.prefetchFill();
  }

  /** Refuses a partition other than the one this stream is. */
  private own(partition: SourcePartition): void {
    if (!samePartition(partition, this.partition)) {
      throw this.fail(
        { kind: 'state' },
        `partition ${partition.topic}/${partition.partition} is not this source's (${this.partition.topic}/0)`,
      );
    }
  }
}
