import {
  BatchQueue,
  ColumnsWriter,
  PauseSet,
  partitionKey,
  recordCount,
  sourcePartition,
  type QueuedBatch,
  type PartitionEnd,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import type {
  ConsumerEvent,
  ConsumerPort,
  ConsumerSettings,
  FetchedBatch,
} from './consumer-port.js';
import type { KafkaReadStats } from './kafka-read-stats.js';
import { fetchedCount } from './consumer-port.js';
import { connectWithin } from './connect-within.js';
import { crashError } from './crash-error.js';
import { KafkaSourceError } from './errors.js';
import { kafkajsConsumer } from './kafkajs-consumer.js';
import { LogEnds } from './log-ends.js';
import type { CommonSettings } from './options.js';
import { QueuePauseClock } from './queue-pause-clock.js';
import type { ReaderHooks } from './reader-hooks.js';
import { toSourceBatch } from './to-source-batch.js';

/**
 * The machinery both modes share: one client, a bounded queue between the
 * client's fetch loop and `batches()`, pause bookkeeping, per-partition
 * floors, and the reaction to group joins.
 *
 * The floor of a partition is the end of the last batch queued for it (or a
 * sought cursor). kafkajs restarts every partition from its committed offset
 * after each join and after a crash; the reader seeks the partitions it keeps
 * back to their floor, and drops whatever still arrives below it, so the
 * spans it yields for a partition always ascend and never repeat.
 */
export class KafkaReader {
  private readonly port: ConsumerPort;
  private readonly queue: BatchQueue;
  private readonly pauses = new PauseSet();
  private readonly floors = new Map<string, number>();
  /** Writes each fetched batch as columns (to-source-batch.ts); its header names stay cached. */
  private readonly columns = new ColumnsWriter();
  /** End of the last batch yielded per partition, while this member owns it. */
  private readonly yieldedEnds = new Map<string, number>();
  private readonly logEnds = new LogEnds();
  private assignment = new Map<string, SourcePartition>();
  /** Between a rejoin starting and its end nothing is yielded: the batches may be about to be revoked. */
  private holding = false;
  private fatal: Error | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;
  private started: Promise<void> | null = null;
  private running: Promise<void> | null = null;
  private iterating = false;
  private wake: (() => void) | undefined;
  private yielded = { batches: 0, records: 0, bytes: 0, empty: 0 };
  private purgedBatches = 0;
  private staleBatches = 0;
  private skippedRecords = 0;
  private joins = 0;
  private readonly queuePauseClock = new QueuePauseClock();

  private readonly brokers: readonly string[];
  private readonly connectTimeoutMs: number;

  constructor(
    settings: CommonSettings,
    consumer: ConsumerSettings,
    private readonly hooks: ReaderHooks,
  ) {
    this.brokers = settings.brokers;
    this.connectTimeoutMs = settings.connectTimeoutMs;
    const factory = settings.kafka ?? kafkajsConsumer;
    this.port = factory(consumer, (event) => {
      this.onEvent(event);
    });
    this.queue = new BatchQueue(settings.maxQueuedBatches, settings.maxQueuedBytes);
  }

  /** The client, for the commit gate. */
  get consumer(): ConsumerPort {
    return this.port;
  }

  /** A getter, so the loop in `batches` re-reads it after every await. */
  private get isClosed(): boolean {
    return this.closed;
  }

  get hasStarted(): boolean {
    return this.started !== null;
  }

  /** The end of the last batch yielded for a partition it still owns. */
  yieldedEnd(partition: SourcePartition): number | undefined {
    return this.yieldedEnds.get(partitionKey(partition));
  }

  /** Each owned partition's log end as its last fetch reported it (its high watermark). */
  logEnd(): readonly PartitionEnd[] {
    return this.logEnds.list();
  }

  /** Sets where a partition starts (a sought cursor); only before `batches`. */
  setFloor(partition: SourcePartition, next: number): void {
    this.floors.set(partitionKey(partition), next);
  }

  async *batches(signal: AbortSignal): AsyncGenerator<SourceBatch, void, undefined> {
    if (this.iterating) {
      throw new KafkaSourceError('TWG_KAFKA_MISUSE', 'batches() is already being iterated');
    }
    this.iterating = true;
    try {
      if (this.closed) return;
      await this.start();
      for (;;) {
        if (this.fatal !== null) throw this.fatal;
        if (this.isClosed || signal.aborted) return;
        const entry = this.holding ? undefined : this.take();
        if (entry !== undefined) {
          yield entry.batch;
          continue;
        }
        await this.changed(signal);
      }
    } finally {
      this.iterating = false;
    }
  }

  pause(partitions: readonly SourcePartition[]): void {
    const now = partitions
      .map((p) => sourcePartition(p.topic, p.partition))
      .filter((p) => this.pauses.add(p, 'pipeline'));
    if (now.length > 0 && this.running !== null) this.port.pause(now);
  }

  resume(partitions: readonly SourcePartition[]): void {
    const now = partitions
      .map((p) => sourcePartition(p.topic, p.partition))
      .filter((p) => this.pauses.remove(p, 'pipeline'));
    if (now.length > 0 && this.running !== null) this.port.resume(now);
    // Batches of these partitions may be waiting in the queue.
    this.notify();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /**
   * The fill of the fetched batches not yet yielded, 0..1. Batches of
   * partitions the pipeline paused are held back and not counted: that
   * queue is full by the pipeline's own hand, which says nothing of pressure.
   */
  prefetchFill(): number {
    return this.queue.fillExcept((key) => this.pauses.has(key, 'pipeline'));
  }

  stats(): KafkaReadStats {
    return {
      batches: this.yielded.batches,
      records: this.yielded.records,
      bytes: this.yielded.bytes,
      emptyBatches: this.yielded.empty,
      queuedBatches: this.queue.size,
      queuedBytes: this.queue.bytes,
      ...this.queuePauseClock.stats(),
      pausedByPipeline: this.pauses.pausedBy('pipeline'),
      purgedBatches: this.purgedBatches,
      staleBatches: this.staleBatches,
      skippedRecords: this.skippedRecords,
      joins: this.joins,
      assignment: [...this.assignment.values()],
    };
  }

  private start(): Promise<void> {
    this.started ??= (async () => {
      const failure = await connectWithin(this.port, this.brokers, this.connectTimeoutMs);
      if (failure !== null) {
        this.fail(failure);
        return;
      }
      if (this.closed) return;
      this.running = this.port
        .run((batch) => {
          this.accept(batch);
        })
        .catch((cause: unknown) => {
          this.fail(crashError(cause));
        });
    })();
    return this.started;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    this.hooks.ended?.(null);
    this.notify();
    if (this.started === null) return;
    await this.started;
    // kafkajs leaves a consumer that is still joining running after a
    // disconnect (it restarts it): let the join end first.
    await this.running;
    await this.port.disconnect();
  }

  /** Events arrive from inside the client, which must never see a throw. */
  private onEvent(event: ConsumerEvent): void {
    try {
      this.hooks.event?.(event);
      switch (event.kind) {
        case 'join-starting':
        case 'rebalancing':
          this.holding = true;
          return;
        case 'joined':
          this.onJoined(event.assignment);
          return;
        case 'filtered-batch':
          this.accept(event.batch);
          return;
        case 'crashed':
          if (event.restart) this.holding = true;
          else this.fail(crashError(event.error));
          return;
        case 'fetching':
          return;
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private onJoined(list: readonly SourcePartition[]): void {
    const next = new Map(
      list.map((p) => [partitionKey(p), { topic: p.topic, partition: p.partition }]),
    );
    const revoked = [...this.assignment].filter(([k]) => !next.has(k)).map(([, p]) => p);
    const assigned = [...next].filter(([k]) => !this.assignment.has(k)).map(([, p]) => p);
    const gone = new Set(revoked.map((p) => partitionKey(p)));
    this.purgedBatches += this.queue.purge(gone);
    const released: SourcePartition[] = [];
    for (const p of revoked) {
      this.floors.delete(partitionKey(p));
      this.yieldedEnds.delete(partitionKey(p));
      this.logEnds.drop(p);
      if (this.pauses.remove(p, 'queue')) released.push(p);
    }
    // kafkajs keeps a pause across reassignments: a revoked partition the
    // queue had paused must not come back paused with nobody to resume it.
    if (released.length > 0) this.port.resume(released);
    this.stopQueuePauseClock();
    this.assignment = next;
    this.joins += 1;
    this.hooks.joined({ assignment: [...next.values()], revoked, assigned });
    for (const [key, p] of next) {
      const floor = this.floors.get(key);
      if (floor !== undefined) this.port.seek(p, floor);
    }
    // kafkajs forgets pauses when it restarts after a crash: state them again.
    const paused = this.pauses.paused();
    if (paused.length > 0) this.port.pause(paused);
    this.resumeIfDrained();
    this.holding = false;
    this.notify();
  }

  private accept(fetched: FetchedBatch): void {
    if (this.closed || this.fatal !== null) return;
    const key = partitionKey(fetched);
    const partition = this.assignment.get(key);
    if (partition === undefined) {
      this.staleBatches += 1;
      return;
    }
    // Before the conversion: a fetch wholly below the floor still says where the log ends.
    this.logEnds.note(partition, fetched.highWatermark);
    let converted;
    try {
      converted = toSourceBatch(fetched, this.floors.get(key), this.columns);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (converted === null) {
      this.skippedRecords += fetchedCount(fetched);
      return;
    }
    this.skippedRecords += converted.skipped;
    this.floors.set(key, converted.batch.span.end);
    this.queue.push({ key, partition, batch: converted.batch, bytes: converted.bytes });
    if (this.queue.overBounds && !this.pauses.has(key, 'queue')) {
      this.queuePauseClock.pausing(this.pauses.count('queue') === 0);
      if (this.pauses.add(partition, 'queue')) this.port.pause([partition]);
    }
    this.notify();
  }

  private take(): QueuedBatch | undefined {
    const entry = this.queue.take((key) => this.pauses.has(key, 'pipeline'));
    if (entry === undefined) return undefined;
    this.yieldedEnds.set(entry.key, entry.batch.span.end);
    this.yielded.batches += 1;
    this.yielded.records += recordCount(entry.batch);
    this.yielded.bytes += entry.bytes;
    if (recordCount(entry.batch) === 0) this.yielded.empty += 1;
    this.resumeIfDrained();
    return entry;
  }

  private resumeIfDrained(): void {
    if (this.pauses.count('queue') === 0 || !this.queue.drained) return;
    const resumed = this.pauses.removeAll('queue');
    this.stopQueuePauseClock();
    if (resumed.length > 0 && this.running !== null && this.fatal === null) {
      this.port.resume(resumed);
    }
  }

  private stopQueuePauseClock(): void {
    if (this.pauses.count('queue') === 0) this.queuePauseClock.released();
  }

  private fail(error: unknown): void {
    if (this.fatal !== null) return;
    this.fatal = error instanceof Error ? error : new Error(String(error));
    this.queue.clear();
    this.hooks.ended?.(this.fatal);
    // The source is dead and its queue will not drain: stop fetching.
    const stop = [...this.assignment.values()].filter((p) => this.pauses.add(p, 'stopped'));
    if (stop.length > 0 && this.running !== null) {
      try {
        this.port.pause(stop);
      } catch {
        // Best effort: the error the caller sees is the one that ended the source.
      }
    }
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
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
