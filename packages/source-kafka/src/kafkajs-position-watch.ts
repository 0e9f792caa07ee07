import type { Kafka } from 'kafkajs';
import { partitionKey, type SourcePartition } from '@thalweg/connector-core';
import { positionLost, type KafkaSourceError } from './errors.js';

/**
 * What kafkajs 2.2.4 logs, at ERROR, when a fetch position lies outside a
 * partition's log, just before it moves the partition to its default offset
 * (the log start or end) and fetches on: the records in between, deleted
 * before the consumer read them, would be skipped without a word to the
 * application. The log line is the only sign it gives.
 */
export const OUT_OF_RANGE_RESET = 'Offset out of range, resetting to default offset';

/**
 * Where each partition of a kafkajs consumer should be read from next, and
 * the partitions whose position kafkajs found outside the log. A lost
 * partition's batches are never delivered (they come from the reset
 * position), and the source ends with `TWG_KAFKA_POSITION_LOST`, as it does
 * over @platformatic/kafka.
 */
export class PositionWatch {
  readonly #next = new Map<string, bigint>();
  readonly #lost = new Set<string>();

  sought(p: SourcePartition, offset: bigint): void {
    this.#next.set(partitionKey(p), offset);
  }

  /**
   * Takes a batch of `p` ending at `lastOffset` for delivery: false when `p`
   * is lost (the batch was read from where kafkajs reset the position to, and
   * is never delivered), else true, and `p` is next read after it.
   */
  deliver(p: SourcePartition, lastOffset: bigint): boolean {
    if (this.isLost(p)) return false;
    this.#next.set(partitionKey(p), lastOffset + 1n);
    return true;
  }

  isLost(p: SourcePartition): boolean {
    return this.#lost.size > 0 && this.#lost.has(partitionKey(p));
  }

  /** Marks `p` lost; false if it already was (kafkajs logs again on each retry). */
  lose(p: SourcePartition): boolean {
    const key = partitionKey(p);
    if (this.#lost.has(key)) return false;
    this.#lost.add(key);
    return true;
  }

  /**
   * The refusal for lost partition `p`: its position (the one sought or
   * delivered up to, else the group's committed offset) and its log's
   * bounds, asked of the cluster ('unknown' where that fails).
   */
  async refusal(kafka: Kafka, groupId: string, p: SourcePartition): Promise<KafkaSourceError> {
    const admin = kafka.admin();
    let position = this.#next.get(partitionKey(p)) ?? -1n;
    let bounds = { logStartOffset: -1n, highWatermark: -1n };
    try {
      await admin.connect();
      if (position < 0n) {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [p.topic] });
        const offset = committed?.partitions.find((x) => x.partition === p.partition)?.offset;
        if (offset !== undefined && offset !== '-1') position = BigInt(offset);
      }
      const listed = await admin.fetchTopicOffsets(p.topic);
      const mine = listed.find((x) => x.partition === p.partition);
      if (mine !== undefined) {
        bounds = { logStartOffset: BigInt(mine.low), highWatermark: BigInt(mine.high) };
      }
    } catch {
      // What could not be asked is reported as unknown: the refusal stands.
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    return positionLost(p, position, bounds);
  }
}
