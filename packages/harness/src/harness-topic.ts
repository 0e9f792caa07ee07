import { kafkaBrokers } from '@thalweg/test-services';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import type { HarnessSource, SourcePositions } from './harness-source.js';
import { payload } from './harness-topology.js';
import { contiguousPrefix, type RawContents } from './raw-audit.js';

/**
 * The run's Kafka topic, from the parent's side: creates it, produces the known
 * records (record `i` goes to partition `i % partitions`, with a unique
 * payload id), and reads the group's committed offsets and the log ends.
 * The producer is idempotent, so a retried send cannot store a payload
 * twice: every offset below the log end is exactly one produced record.
 */
export class HarnessTopic implements HarnessSource {
  private readonly kafka = new Kafka({
    clientId: 'thalweg-harness',
    brokers: kafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  private readonly admin: Admin = this.kafka.admin();
  private readonly producer: Producer = this.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
  });
  produced = 0;

  constructor(
    readonly topic: string,
    readonly partitions: number,
    readonly run: string,
    readonly group: string,
  ) {}

  async create(): Promise<void> {
    await this.admin.connect();
    await this.producer.connect();
    await this.admin.createTopics({
      topics: [{ topic: this.topic, numPartitions: this.partitions, replicationFactor: 1 }],
      waitForLeaders: true,
    });
  }

  /** Produces `n` more records, spread over the partitions. */
  async produce(n: number): Promise<void> {
    const first = this.produced;
    this.produced += n;
    const messages = Array.from({ length: n }, (_, k) => {
      const i = first + k;
      return { partition: i % this.partitions, value: payload(i, this.run) };
    });
    for (let at = 0; at < messages.length; at += 500) {
      await this.producer.send({ topic: this.topic, messages: messages.slice(at, at + 500) });
    }
  }

  /** The group's committed next offset per partition (0 when none). */
  async committed(groupId: string): Promise<number[]> {
    const [entry] = await this.admin.fetchOffsets({ groupId, topics: [this.topic] });
    const out = new Array<number>(this.partitions).fill(0);
    for (const p of entry?.partitions ?? []) out[p.partition] = Math.max(0, Number(p.offset));
    return out;
  }

  /**
   * The committed offsets: a position leads when it is above the run of
   * offsets from 0 that raw holds without a hole.
   */
  async positions(): Promise<SourcePositions> {
    const committed = await this.committed(this.group);
    const topic = this.topic;
    return {
      acknowledged: (p, o) => o < (committed[p] ?? 0),
      done: committed.reduce((a, b) => a + b, 0),
      leads: (raw: RawContents) => {
        const out: string[] = [];
        committed.forEach((c, p) => {
          const prefix = contiguousPrefix(raw.records[p] ?? new Map());
          if (c > prefix) out.push(`${topic}/${p} committed ${c}, raw holds [0, ${prefix})`);
        });
        return out;
      },
      summary: `committed [${committed.join(', ')}]`,
    };
  }

  /** Offsets [0, log end) per partition: the idempotent producer stored each record once. */
  async offsets(): Promise<number[][]> {
    return (await this.ends()).map((end) => Array.from({ length: end }, (_, o) => o));
  }

  *offsetsIn(_partition: number, start: number, end: number): Iterable<number> {
    for (let o = start; o < end; o++) yield o;
  }

  /** Record `i` is the `floor(i / partitions)`-th of its partition: one producer, in order, idempotent. */
  payloadAt(partition: number, offset: number): string | undefined {
    const i = offset * this.partitions + partition;
    return partition < this.partitions && i < this.produced ? payload(i, this.run) : undefined;
  }

  /** The log end offset per partition. */
  async ends(): Promise<number[]> {
    const offsets = await this.admin.fetchTopicOffsets(this.topic);
    const out = new Array<number>(this.partitions).fill(0);
    for (const o of offsets) out[o.partition] = Number(o.high);
    return out;
  }

  /** Deletes the topic and the group (cleanup; failures are the caller's to log). */
  async remove(): Promise<void> {
    await this.admin.deleteGroups([this.group]).catch(() => undefined);
    await this.admin.deleteTopics({ topics: [this.topic] });
  }

  async close(): Promise<void> {
    await this.producer.disconnect();
    await this.admin.disconnect();
  }
}
