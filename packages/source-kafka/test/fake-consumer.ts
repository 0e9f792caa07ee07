import {
  kafkaSource,
  type CommitOffset,
  type CommitResult,
  type ConsumerEvent,
  type ConsumerFactory,
  type ConsumerPort,
  type ConsumerSettings,
  type FetchedBatch,
  type FetchedMessages,
  type FetchedMessage,
} from '../src/index.js';
import type { SourcePartition } from '@thalweg/connector-core';
import { BatchCollector, quiet } from './helpers.js';

const at = (p: SourcePartition) => `${p.topic}/${p.partition}`;

/**
 * A scripted client: the test plays the group (joins, rebalances, crashes)
 * and the broker (batches, commit answers), and reads back every call the
 * source made. Events are delivered synchronously, as kafkajs does.
 */
export class FakeConsumer implements ConsumerPort {
  emit: (event: ConsumerEvent) => void = () => undefined;
  settings: ConsumerSettings | undefined;
  private onBatch: ((batch: FetchedBatch) => void) | undefined;
  readonly calls: string[] = [];
  readonly commits: CommitOffset[][] = [];
  /** How the next commits end; the default applies them. */
  answer: (offsets: readonly CommitOffset[]) => Promise<CommitResult> = () =>
    Promise.resolve({ kind: 'applied' });

  static factory(): { factory: ConsumerFactory; consumer: FakeConsumer } {
    const consumer = new FakeConsumer();
    const factory: ConsumerFactory = (settings, events) => {
      consumer.settings = settings;
      consumer.emit = events;
      return consumer;
    };
    return { factory, consumer };
  }

  get running(): boolean {
    return this.onBatch !== undefined;
  }

  async connect(): Promise<void> {
    this.calls.push('connect');
  }

  async subscribe(): Promise<void> {
    this.calls.push('subscribe');
  }

  async run(onBatch: (batch: FetchedBatch) => void): Promise<void> {
    this.calls.push('run');
    this.onBatch = onBatch;
  }

  commit(offsets: readonly CommitOffset[]): Promise<CommitResult> {
    this.commits.push([...offsets]);
    return this.answer(offsets);
  }

  seek(partition: SourcePartition, offset: number): void {
    this.calls.push(`seek ${at(partition)} ${offset}`);
  }

  pause(partitions: readonly SourcePartition[]): void {
    this.calls.push(`pause ${partitions.map(at).join(',')}`);
  }

  resume(partitions: readonly SourcePartition[]): void {
    this.calls.push(`resume ${partitions.map(at).join(',')}`);
  }

  async disconnect(): Promise<void> {
    this.calls.push('disconnect');
  }

  /** A whole join as kafkajs reports it: starting, joined, fetching. */
  join(assignment: readonly SourcePartition[]): void {
    this.emit({ kind: 'join-starting' });
    this.emit({ kind: 'joined', assignment });
    this.emit({ kind: 'fetching' });
  }

  /** Delivers offsets [from, from + count) of a partition as one batch, values `<topic>/<p>@<offset>`. */
  deliver(
    p: SourcePartition,
    from: number,
    count: number,
    extra: Partial<FetchedMessages> = {},
  ): void {
    const messages: FetchedMessage[] = Array.from({ length: count }, (_, k) => ({
      offset: String(from + k),
      key: null,
      value: Buffer.from(`${at(p)}@${from + k}`),
      timestamp: '1700000000000',
      headers: [],
    }));
    this.batch({
      topic: p.topic,
      partition: p.partition,
      firstOffset: String(from),
      lastOffset: String(from + count - 1),
      // As if the batch ran to the log's end; `extra` says otherwise.
      highWatermark: String(from + count),
      kind: 'messages',
      messages,
      ...extra,
    });
  }

  batch(batch: FetchedBatch): void {
    if (this.onBatch === undefined) throw new Error('deliver before run');
    this.onBatch(batch);
  }

  /** Calls since the last `take`, for step-by-step checks. */
  take(): string[] {
    return this.calls.splice(0);
  }
}

/**
 * An assigned-mode source on partitions 0 and 2 of topic `t`, driven by a
 * FakeConsumer, with a collector of what it delivers.
 */
export function fakeAssignedSource() {
  const { factory, consumer } = FakeConsumer.factory();
  const source = kafkaSource({
    mode: 'assigned',
    brokers: ['127.0.0.1:9092'],
    cluster: 'c',
    partitions: [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 2 },
    ],
    clientId: 'ingest',
    log: quiet,
    kafka: factory,
  });
  return { source, consumer, collector: new BatchCollector(source) };
}

/** Resolves on the next turn of the event loop, after pending promise jobs. */
export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Waits for a deferred answer the test settles by hand. */
export function deferred<T>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: Error) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
