import { Kafka, logLevel, type Admin, type Message, type Producer } from 'kafkajs';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import type { SourceBatch } from '@thalweg/connector-core';
import {
  kafkaSource,
  type KafkaAssignedOptions,
  type KafkaAssignedSource,
  type KafkaGroupOptions,
  type KafkaGroupSource,
} from '../src/index.js';

export const quiet = (): void => undefined;

/**
 * Group settings small enough for tests: the broker's minimum session
 * (group.min.session.timeout.ms, 6 s), frequent heartbeats and short fetch
 * waits, so a rebalance is noticed within a few hundred milliseconds.
 */
export const FAST = {
  sessionTimeout: 6_000,
  rebalanceTimeout: 6_000,
  heartbeatInterval: 150,
  maxWaitTimeInMs: 100,
  log: quiet,
} as const;

export function groupSource(
  topic: string,
  groupId: string,
  extra: Partial<KafkaGroupOptions> = {},
): KafkaGroupSource {
  return kafkaSource({
    mode: 'group',
    brokers: kafkaBrokers(),
    cluster: 'test-cluster',
    topics: [topic],
    groupId,
    ...FAST,
    ...extra,
  });
}

export function assignedSource(
  extra: Partial<KafkaAssignedOptions> & Pick<KafkaAssignedOptions, 'partitions'>,
): KafkaAssignedSource {
  return kafkaSource({
    mode: 'assigned',
    brokers: kafkaBrokers(),
    cluster: 'test-cluster',
    ...FAST,
    ...extra,
  });
}

/** One admin and producer per test file, and fresh topics with several partitions. */
export class KafkaFixture {
  readonly kafka = new Kafka({
    clientId: 'thalweg-source-kafka-test',
    brokers: kafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  admin!: Admin;
  producer!: Producer;
  private readonly topics: string[] = [];

  async start(): Promise<void> {
    this.admin = this.kafka.admin();
    this.producer = this.kafka.producer();
    await Promise.all([this.admin.connect(), this.producer.connect()]);
  }

  async stop(): Promise<void> {
    if (this.topics.length > 0) {
      await this.admin.deleteTopics({ topics: this.topics }).catch(() => undefined);
    }
    await Promise.all([this.admin.disconnect(), this.producer.disconnect()]);
  }

  async topic(partitions: number, prefix = 'twg-src'): Promise<string> {
    const topic = uniqueName(prefix);
    await this.admin.createTopics({
      topics: [{ topic, numPartitions: partitions }],
      waitForLeaders: true,
    });
    this.topics.push(topic);
    return topic;
  }

  async send(topic: string, messages: Message[]): Promise<void> {
    await this.producer.send({ topic, messages, acks: -1 });
  }

  /** value `v<i>` for i in [from, from + count), partition i % partitions. */
  async sendNumbered(
    topic: string,
    partitions: number,
    from: number,
    count: number,
  ): Promise<void> {
    await this.send(
      topic,
      Array.from({ length: count }, (_, k) => ({
        partition: (from + k) % partitions,
        key: `k${from + k}`,
        value: `v${from + k}`,
      })),
    );
  }

  /** Committed offsets of a group, per partition (-1: none). */
  async committed(groupId: string, topic: string): Promise<Map<number, number>> {
    const [entry] = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map((entry?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  }
}

export const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

/**
 * Pulls batches from a source into `batches`, for as long as a test needs.
 * `until` waits (bounded: a hung source fails the test instead of hanging
 * it) for a condition over what arrived; a pending pull is kept across calls
 * so no batch is lost when a wait ends.
 */
export class BatchCollector {
  readonly batches: SourceBatch[] = [];
  readonly controller = new AbortController();
  private readonly iterator: AsyncIterator<SourceBatch>;
  private pending: Promise<IteratorResult<SourceBatch>> | null = null;
  ended = false;

  constructor(source: { batches(signal: AbortSignal): AsyncIterable<SourceBatch> }) {
    this.iterator = source.batches(this.controller.signal)[Symbol.asyncIterator]();
  }

  records(): number {
    return this.batches.reduce((n, b) => n + b.records.length, 0);
  }

  values(): string[] {
    return this.batches.flatMap((b) => b.records.map((r) => text(r.value)));
  }

  /** Pulls until `cond` holds; fails after `limitMs`. */
  async until(cond: (c: BatchCollector) => boolean, limitMs = 15_000): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!cond(this)) {
      if (this.ended) throw new Error('the source ended before the condition held');
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`condition not met within ${limitMs} ms (${this.records()} records)`);
      }
      await this.pull(left);
    }
  }

  /**
   * Pulls until the event loop has turned twice and returns what arrived: for
   * a source over the scripted client, whose deliveries are synchronous, that
   * is everything it can yield now. A condition, not a duration: what a test
   * asserts never depends on how long the machine took.
   */
  async yieldable(): Promise<SourceBatch[]> {
    const from = this.batches.length;
    for (;;) {
      this.pending ??= this.iterator.next();
      const turned = new Promise<'turned'>((r) =>
        setImmediate(() => setImmediate(() => r('turned'))),
      );
      const result = await Promise.race([this.pending, turned]);
      if (result === 'turned') return this.batches.slice(from);
      this.pending = null;
      if (result.done === true) {
        this.ended = true;
        return this.batches.slice(from);
      }
      this.batches.push(result.value);
    }
  }

  private async pull(ms: number): Promise<void> {
    this.pending ??= this.iterator.next();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout');
      }, ms);
    });
    const result = await Promise.race([this.pending, timeout]);
    clearTimeout(timer);
    if (result === 'timeout') return;
    this.pending = null;
    if (result.done === true) this.ended = true;
    else this.batches.push(result.value);
  }
}

/** Checks spans of each partition touch end to start, and returns the last end per partition. */
export function contiguousEnds(batches: readonly SourceBatch[]): Map<number, number> {
  const ends = new Map<number, number>();
  for (const b of batches) {
    const prev = ends.get(b.span.partition);
    if (prev !== undefined && b.span.start !== prev) {
      throw new Error(
        `partition ${b.span.partition}: span starts at ${b.span.start}, previous ended at ${prev}`,
      );
    }
    ends.set(b.span.partition, b.span.end);
  }
  return ends;
}

/**
 * What retention does to a lagging reader: every record of partition 0
 * before `before` is deleted. Through @platformatic/kafka's admin (Node 22+):
 * kafkajs 2.2.4's deleteTopicRecords fails against this broker.
 */
export async function deleteBefore(topic: string, before: number): Promise<void> {
  const { Admin } = await import('@platformatic/kafka');
  const admin = new Admin({ clientId: 'twg-delete-records', bootstrapBrokers: kafkaBrokers() });
  try {
    await admin.deleteRecords({
      topics: [{ name: topic, partitions: [{ partition: 0, offset: BigInt(before) }] }],
    });
  } finally {
    await admin.close();
  }
}
