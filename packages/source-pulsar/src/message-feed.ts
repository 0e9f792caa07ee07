import {
  BatchQueue,
  offsetSpan,
  PauseSet,
  partitionKey,
  type PauseReason,
  type Scheduler,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import { PulsarSourceError } from './errors.js';
import type { HeldMessage } from './to-record.js';

/** What the feed tells its source. */
export interface FeedHooks {
  /** Runs in `batches()` before each take: the moment a source may change assignment in stream order. */
  beforeTake(): void;
  /** A batch is about to be yielded (its messages, in order). */
  yielded(partition: SourcePartition, messages: readonly HeldMessage[]): void;
  /** A partition is paused or fetched again (for any reason): permits follow it. */
  pauseChanged(partition: SourcePartition, paused: boolean): void;
}

interface OpenBatch {
  readonly partition: SourcePartition;
  messages: HeldMessage[];
  bytes: number;
}

export interface FeedBounds {
  readonly maxQueuedBatches: number;
  readonly maxQueuedBytes: number;
  readonly maxBatchMessages: number;
  /** How long a batch not yet full waits for more, on `scheduler`; 0: one event-loop turn. */
  readonly lingerMs: number;
  readonly scheduler: Scheduler;
}

/**
 * Messages received and not yet yielded, for both Pulsar regimes. A
 * session hands over one message at a time; consecutive messages of one
 * partition gather in its open batch until it holds `maxBatchMessages` or
 * `batches()` finds nothing else to yield, and then join the bounded queue
 * (connector-core's BatchQueue). A partition is held back while any reason
 * in the pause set holds it: the pipeline's pause, the full queue (until it
 * drained to half) or the source stopping.
 */
export class MessageFeed {
  private readonly queue: BatchQueue;
  private readonly pauses = new PauseSet();
  private readonly open = new Map<string, OpenBatch>();
  private readonly contents = new WeakMap<SourceBatch, readonly HeldMessage[]>();
  /** Messages received and not yet yielded, per partition (open and queued). */
  private readonly counts = new Map<string, number>();
  private fatal: Error | null = null;
  private closed = false;
  private iterating = false;
  private wake: (() => void) | undefined;
  /** Ends a linger early: a batch filled, or the feed closed or failed. */
  private lingering: (() => void) | undefined;

  constructor(
    private readonly bounds: FeedBounds,
    private readonly hooks: FeedHooks,
  ) {
    this.queue = new BatchQueue(bounds.maxQueuedBatches, bounds.maxQueuedBytes);
  }

  get failure(): Error | null {
    return this.fatal;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Takes a message of a partition; messages of a partition must come in ascending offsets. */
  push(partition: SourcePartition, message: HeldMessage): void {
    if (this.closed || this.fatal !== null) return;
    const key = partitionKey(partition);
    let open = this.open.get(key);
    if (open === undefined) {
      open = { partition, messages: [], bytes: 0 };
      this.open.set(key, open);
    }
    open.messages.push(message);
    open.bytes += message.bytes;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (open.messages.length >= this.bounds.maxBatchMessages) {
      this.seal(key);
      this.lingering?.();
    }
    this.notify();
  }

  /** Messages of a partition received and not yet yielded. */
  pending(partition: SourcePartition): number {
    return this.counts.get(partitionKey(partition)) ?? 0;
  }

  /** Drops what a partition has not yet yielded (its session closed); returns how many messages. */
  purge(partition: SourcePartition): number {
    const key = partitionKey(partition);
    const before = this.pending(partition);
    this.open.delete(key);
    this.counts.delete(key);
    this.queue.purge(new Set([key]));
    this.release(partition, 'queue');
    return before;
  }

  isPaused(partition: SourcePartition): boolean {
    return this.pauses.paused().some((p) => partitionKey(p) === partitionKey(partition));
  }

  pausedByPipeline(): SourcePartition[] {
    return this.pauses.pausedBy('pipeline');
  }

  hold(partition: SourcePartition, reason: PauseReason): void {
    if (this.pauses.add(partition, reason)) this.hooks.pauseChanged(partition, true);
  }

  release(partition: SourcePartition, reason: PauseReason): void {
    if (this.pauses.remove(partition, reason)) this.hooks.pauseChanged(partition, false);
    this.notify();
  }

  /**
   * The fill of what was received and not yet yielded, 0..1: the sealed
   * queue's, or the open batches' against the byte and message bounds,
   * whichever is fuller. Partitions the pipeline paused are not counted.
   */
  prefetchFill(): number {
    const held = (key: string) => this.pauses.has(key, 'pipeline');
    let messages = 0;
    let bytes = 0;
    for (const [key, o] of this.open) {
      if (held(key)) continue;
      messages += o.messages.length;
      bytes += o.bytes;
    }
    const { maxQueuedBatches, maxQueuedBytes, maxBatchMessages } = this.bounds;
    return Math.min(
      1,
      Math.max(
        this.queue.fillExcept(held),
        bytes / maxQueuedBytes,
        messages / (maxQueuedBatches * maxBatchMessages),
      ),
    );
  }

  fail(error: unknown): void {
    if (this.fatal !== null || this.closed) return;
    this.fatal = error instanceof Error ? error : new Error(String(error));
    this.queue.clear();
    this.open.clear();
    this.counts.clear();
    this.lingering?.();
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.queue.clear();
    this.open.clear();
    this.counts.clear();
    this.lingering?.();
    this.notify();
  }

  async *batches(signal: AbortSignal): AsyncGenerator<SourceBatch, void, undefined> {
    if (this.iterating) {
      throw new PulsarSourceError('TWG_PULSAR_MISUSE', 'batches() is already being iterated');
    }
    this.iterating = true;
    try {
      for (;;) {
        if (this.fatal !== null) throw this.fatal;
        if (this.closed || signal.aborted) return;
        this.hooks.beforeTake();
        // The hook may have failed the source: read the field again, not the narrowed one.
        const failed = this.failedNow();
        if (failed !== null) throw failed;
        let batch = this.take(false);
        if (batch === undefined && this.hasOpen()) {
          // A session hands over one message per frame: wait a little for
          // more before the open batches are sealed, or every batch would
          // hold one message (and raw would write a segment for each).
          await this.linger(signal);
          // Closed, failed or stopped meanwhile: the loop's top says so.
          if (this.ended(signal)) continue;
          batch = this.take(true);
        }
        if (batch !== undefined) {
          yield batch;
          continue;
        }
        await this.changed(signal);
      }
    } finally {
      this.iterating = false;
    }
  }

  /** Read through a method: the fields change while `batches()` awaits, which narrowing cannot see. */
  private ended(signal: AbortSignal): boolean {
    return this.closed || this.fatal !== null || signal.aborted;
  }

  private failedNow(): Error | null {
    return this.fatal;
  }

  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Whether a partition not paused by the pipeline has messages not yet sealed into a batch. */
  private hasOpen(): boolean {
    for (const [key, o] of this.open) {
      if (o.messages.length > 0 && !this.pauses.has(key, 'pipeline')) return true;
    }
    return false;
  }

  /** The next sealed batch; with `sealOpen`, open batches are sealed first when none is. */
  private take(sealOpen: boolean): SourceBatch | undefined {
    const held = (key: string) => this.pauses.has(key, 'pipeline');
    let entry = this.queue.take(held);
    if (entry === undefined && sealOpen) {
      // Nothing sealed: seal what is open, oldest partitions first.
      for (const [key] of this.open) if (!held(key)) this.seal(key);
      entry = this.queue.take(held);
    }
    if (entry === undefined) return undefined;
    const messages = this.contents.get(entry.batch) ?? [];
    const left = (this.counts.get(entry.key) ?? 0) - messages.length;
    if (left > 0) this.counts.set(entry.key, left);
    else this.counts.delete(entry.key);
    this.hooks.yielded(entry.partition, messages);
    if (this.pauses.count('queue') > 0 && this.queue.drained) {
      for (const p of this.pauses.pausedBy('queue')) this.release(p, 'queue');
    }
    return entry.batch;
  }

  private seal(key: string): void {
    const open = this.open.get(key);
    if (open === undefined || open.messages.length === 0) return;
    this.open.delete(key);
    const first = open.messages[0];
    const last = open.messages[open.messages.length - 1];
    if (first === undefined || last === undefined) return;
    const { topic, partition } = open.partition;
    const batch: SourceBatch = {
      span: offsetSpan(topic, partition, first.offset, last.offset + 1),
      records: open.messages.map((m) => m.record),
    };
    this.contents.set(batch, open.messages);
    this.queue.push({ key, partition: open.partition, batch, bytes: open.bytes });
    if (this.queue.overBounds) this.hold(open.partition, 'queue');
  }

  private linger(signal: AbortSignal): Promise<void> {
    if (this.bounds.lingerMs === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      let cancel = (): void => undefined;
      const done = (): void => {
        cancel();
        signal.removeEventListener('abort', done);
        this.lingering = undefined;
        resolve();
      };
      this.lingering = done;
      cancel = this.bounds.scheduler.after(this.bounds.lingerMs, done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
