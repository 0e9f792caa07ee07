import { offsetSpan, partitionKey, samePartition, type SourcePartition } from '../offset-span.js';
import type { SourceBatch, SourceRecord } from '../source.js';
import { BatchQueue } from './batch-queue.js';
import { PauseSet } from './pause-set.js';

/** One run of records to queue: their first offset, the records, their value bytes. */
export interface FeedRun {
  readonly start: number;
  readonly records: readonly SourceRecord[];
  readonly bytes: number;
}

export interface StreamFeedOptions {
  /** The one partition the stream is. */
  readonly partition: SourcePartition;
  /** The prefetch queue's bounds; over either, the pump is held until the queue drains to half. */
  readonly prefetchBatches: number;
  readonly prefetchBytes: number;
  /** Stops the transport (cancels a call, closes a socket): on `close()` and when the consumer leaves. */
  readonly stop: () => void;
  /**
   * What an abort of the consumer's signal does at once: `'stop'` stops the
   * transport then, `'wake'` only wakes both sides (the transport is stopped
   * when the consumer leaves `batches()`).
   */
  readonly onAbort: 'stop' | 'wake';
}

/**
 * The machinery of a store-managed source that reads one stream as one
 * partition: a bounded prefetch queue between the source's pump (its
 * transport: connect, decode, number rows, reconnect) and the consumer of
 * `batches()`.
 *
 * The pump waits on `readable()` before each read, so it reads only while
 * the partition is neither paused by the pipeline nor held by the full
 * queue (the transport's own flow control then holds the producer, and
 * memory stays bounded). The queue's hold is released once the consumer has
 * drained it to half. When the pump fails, the batches it queued first are
 * yielded, then its error is thrown; when it ends, `batches()` ends once the
 * queue is empty. Each source keeps its own transport and errors; this class
 * only moves batches and pause state between the two sides.
 */
export class StreamFeed {
  private readonly partition: SourcePartition;
  private readonly key: string;
  private readonly queue: BatchQueue;
  private readonly pauses = new PauseSet();
  private readonly stop: () => void;
  private readonly onAbort: 'stop' | 'wake';
  private isStarted = false;
  private isClosed = false;
  private ended = false;
  private failure: Error | undefined;
  private maxBytes = 0;
  private wakeConsumer: (() => void) | undefined;
  private wakePump: (() => void) | undefined;

  constructor(options: StreamFeedOptions) {
    this.partition = options.partition;
    this.key = partitionKey(options.partition);
    this.queue = new BatchQueue(options.prefetchBatches, options.prefetchBytes);
    this.stop = options.stop;
    this.onAbort = options.onAbort;
  }

  /** Whether `batches()` has been started. */
  get started(): boolean {
    return this.isStarted;
  }

  /** Whether the source closed or the consumer left: the pump should stop. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** The most record value bytes the queue held. */
  get maxQueuedBytes(): number {
    return this.maxBytes;
  }

  /** Pauses the partition for the pipeline, when it is among `partitions`. */
  pause(partitions: readonly SourcePartition[]): void {
    for (const p of partitions)
      if (samePartition(p, this.partition)) this.pauses.add(p, 'pipeline');
  }

  /** Lifts the pipeline's pause; the pump reads again only if the queue does not hold it. */
  resume(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) {
      if (samePartition(p, this.partition) && this.pauses.remove(p, 'pipeline')) this.wake();
    }
    // Held batches may be yielded again even while the queue still holds the pump.
    this.wakeConsumer?.();
  }

  /** How full the queue is, 0..1, leaving out batches the pipeline holds back. */
  prefetchFill(): number {
    return this.queue.fillExcept((key) => this.pauses.has(key, 'pipeline'));
  }

  /** Marks the feed closed, stops the transport and wakes both sides. */
  close(): void {
    this.isClosed = true;
    this.stop();
    this.wake();
  }

  /**
   * Queues one run of records at `run.start`; returns the offset after it.
   * A queue over its bounds holds the pump until the consumer drains it.
   */
  push(run: FeedRun): number {
    const { topic, partition } = this.partition;
    const span = offsetSpan(topic, partition, run.start, run.start + run.records.length);
    this.queue.push({
      key: this.key,
      partition: this.partition,
      batch: { span, records: run.records },
      bytes: run.bytes,
    });
    this.maxBytes = Math.max(this.maxBytes, this.queue.bytes);
    if (this.queue.overBounds) this.pauses.add(this.partition, 'queue');
    this.wakeConsumer?.();
    return span.end;
  }

  /** Resolves once no pause holds the partition (or the feed closed). */
  async readable(): Promise<void> {
    while (!this.isClosed && this.pauses.paused().length > 0) {
      await new Promise<void>((resolve) => {
        this.wakePump = resolve;
      });
    }
  }

  /**
   * Starts `pump` and yields what it queues, in order, until it ends and the
   * queue is empty, it fails (after what it queued first), the signal aborts
   * or the feed closes. Leaving closes the feed, which stops the transport.
   */
  async *batches(signal: AbortSignal, pump: () => Promise<void>): AsyncGenerator<SourceBatch> {
    if (this.isStarted) throw new Error('StreamFeed.batches() called twice');
    this.isStarted = true;
    const onAbort = () => {
      if (this.onAbort === 'stop') this.stop();
      this.wake();
    };
    signal.addEventListener('abort', onAbort);
    pump().then(
      () => {
        this.ended = true;
        this.wake();
      },
      (error: unknown) => {
        this.failure = error instanceof Error ? error : new Error(String(error));
        this.wake();
      },
    );
    try {
      for (;;) {
        if (signal.aborted || this.isClosed) return;
        const entry = this.queue.take((key) => this.pauses.has(key, 'pipeline'));
        if (entry !== undefined) {
          if (this.queue.drained && this.pauses.remove(this.partition, 'queue')) this.wake();
          yield entry.batch;
          continue;
        }
        // Rows read before a failure are yielded first; nothing after it was queued.
        if (this.queue.size === 0 && this.failure !== undefined) throw this.failure;
        if (this.queue.size === 0 && this.ended) return;
        await new Promise<void>((resolve) => {
          this.wakeConsumer = resolve;
        });
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.close();
    }
  }

  private wake(): void {
    this.wakeConsumer?.();
    this.wakePump?.();
  }
}
