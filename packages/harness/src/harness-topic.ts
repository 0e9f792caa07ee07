import { kafkaBrokers } from '@thalweg/test-services';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { payload } from './harness-topology.js';

/**
 * The run's topic, from the parent's side: creates it, produces the known
 * records (record `i` goes to partition `i % partitions`, with a unique
 * payload id), and reads the group's committed offsets and the log ends.
 * The producer is idempotent, so a retried send cannot store a payload
 * twice: every offset below the log end is exactly one produced record.
 */
export class HarnessTopic {
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

  /** The log end offset per partition. */
  async ends(): Promise<number[]> {
    const offsets = await this.admin.fetchTopicOffsets(this.topic);
    const out = new Array<number>(this.partitions).fill(0);
    for (const o of offsets) out[o.partition] = Number(o.high);
    return out;
  }

  /** Deletes the topic and the group (cleanup; failures are the caller's to log). */
  async remove(groupId: string): Promise<void> {
    await this.admin.deleteGroups([groupId]).catch(() => undefined);
    await this.admin.deleteTopics({ topics: [this.topic] });
  }

  async close(): Promise<void> {
    await this.producer.disconnect();
    await this.admin.disconnect();
  }
}
