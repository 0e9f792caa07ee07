import { randomUUID } from 'node:crypto';
import {
  checkOffset,
  partitionKey,
  type PartitionEnd,
  type SourceBatch,
  type SourceCursor,
  type SourceOrigin,
  type SourcePartition,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import { describePartition, KafkaSourceError } from './errors.js';
import type { KafkaReadStats } from './kafka-read-stats.js';
import { KafkaReader } from './kafka-reader.js';
import type { AssignmentChange } from './reader-hooks.js';
import { consumerSettings, describeSettings, type KafkaAssignedSettings } from './options.js';

export type KafkaAssignedStats = KafkaReadStats;

const REPLAYABLE: SourceOrigin = Object.freeze({ kind: 'replayable' });

/**
 * A fixed list of partitions whose position lives in the thalweg offset
 * store (store-managed): nothing is committed to Kafka.
 *
 * kafkajs has no manual `assign()`, so the source joins a consumer group of
 * its own, `groupId` (`<clientId>-assigned-<uuid>`, unique per source
 * instance, never reused), whose assigner gives this member exactly the
 * configured partitions. The group exists on the broker while the source
 * runs and holds no offsets; Kafka expires it once empty. Its membership
 * still needs heartbeats, so `sessionTimeout` applies as in group mode.
 *
 * A partition with a cursor (`seek`) starts exactly there; one without
 * starts at the earliest offset (`fromBeginning`, default true) or the latest.
 * After any rejoin or client restart the source seeks every partition back to
 * the end of what it already queued, so nothing is skipped or repeated.
 */
export class KafkaAssignedSource implements StoreManagedSource {
  readonly regime = 'store-managed' as const;
  readonly origin = REPLAYABLE;
  readonly cluster: string;
  /** The throwaway group this source reads in; nothing is ever committed to it. */
  readonly groupId: string;
  private readonly configured: readonly SourcePartition[];
  private readonly keys: ReadonlySet<string>;
  private readonly reader: KafkaReader;

  /** Use `kafkaSource({ mode: 'assigned', ... })`, which validates the options. */
  constructor(settings: KafkaAssignedSettings) {
    this.cluster = settings.cluster;
    this.groupId = `${settings.clientId}-assigned-${randomUUID()}`;
    this.configured = Object.freeze(
      settings.partitions.map((p) => Object.freeze({ topic: p.topic, partition: p.partition })),
    );
    this.keys = new Set(this.configured.map((p) => partitionKey(p)));
    for (const line of describeSettings(settings)) settings.debug(`thalweg source-kafka: ${line}`);
    settings.debug(`thalweg source-kafka: throwaway groupId=${this.groupId}`);
    this.reader = new KafkaReader(
      settings,
      consumerSettings(settings, this.groupId, { kind: 'fixed', partitions: this.configured }),
      {
        joined: (change) => {
          this.verify(change);
        },
      },
    );
  }

  partitions(): readonly SourcePartition[] {
    return this.configured;
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    this.known(partition);
    return { kind: 'log-offset', nextOffset: checkOffset(next, 'next') };
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    const at = this.known(partition);
    if (this.reader.hasStarted) {
      throw new KafkaSourceError(
        'TWG_KAFKA_MISUSE',
        `seek(${describePartition(at)}) after batches() started; seek every partition first`,
        { partition: at },
      );
    }
    // Cursors come back from storage as JSON, so the kind and the offset are checked at run time.
    const kind: unknown = (cursor as { kind?: unknown }).kind;
    if (kind !== 'log-offset') {
      throw new KafkaSourceError(
        'TWG_KAFKA_CURSOR_INVALID',
        `${describePartition(at)}: a cursor of kind ${JSON.stringify(kind)} cannot position a Kafka ` +
          'partition; expected "log-offset"',
        { partition: at },
      );
    }
    const next: unknown = (cursor as { nextOffset?: unknown }).nextOffset;
    if (typeof next !== 'number' || !Number.isSafeInteger(next) || next < 0) {
      throw new KafkaSourceError(
        'TWG_KAFKA_CURSOR_INVALID',
        `${describePartition(at)}: cursor nextOffset ${String(next)} is not a non-negative safe integer`,
        { partition: at },
      );
    }
    this.reader.setFloor(at, next);
  }

  batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    return this.reader.batches(signal);
  }

  prefetchFill(): number {
    return this.reader.prefetchFill();
  }

  /** Each owned partition's high watermark, as its last fetch reported it. */
  logEnd(): readonly PartitionEnd[] {
    return this.reader.logEnd();
  }

  pause(partitions: readonly SourcePartition[]): void {
    this.reader.pause(partitions);
  }

  resume(partitions: readonly SourcePartition[]): void {
    this.reader.resume(partitions);
  }

  stats(): KafkaAssignedStats {
    return this.reader.stats();
  }

  close(): Promise<void> {
    return this.reader.close();
  }

  private known(partition: SourcePartition): SourcePartition {
    const found = this.configured.find(
      (p) => p.topic === partition.topic && p.partition === partition.partition,
    );
    if (found === undefined) {
      throw new KafkaSourceError(
        'TWG_KAFKA_PARTITION_UNKNOWN',
        `${describePartition(partition)} is not one of the configured partitions`,
        { partition },
      );
    }
    return found;
  }

  /** Anything but exactly the configured partitions means someone else is in our group. */
  private verify(change: AssignmentChange): void {
    const got = change.assignment;
    if (got.length === this.keys.size && got.every((p) => this.keys.has(partitionKey(p)))) return;
    throw new KafkaSourceError(
      'TWG_KAFKA_ASSIGNMENT_MISMATCH',
      `the throwaway group ${this.groupId} assigned [${got.map(describePartition).join(', ')}] ` +
        `instead of [${this.configured.map(describePartition).join(', ')}]`,
    );
  }
}
