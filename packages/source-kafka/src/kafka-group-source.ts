import type {
  AssignmentEvent,
  BrokerManagedSource,
  PartitionEnd,
  SourceBatch,
  SourceOrigin,
  SourcePartition,
} from '@thalweg/connector-core';
import { CommitGate, type CommitOutcome, type CommitStats } from './commit-gate.js';
import { KafkaSourceError } from './errors.js';
import type { KafkaReadStats } from './kafka-read-stats.js';
import { KafkaReader } from './kafka-reader.js';
import type { AssignmentChange } from './reader-hooks.js';
import { consumerSettings, describeSettings, type KafkaGroupSettings } from './options.js';

export type KafkaGroupStats = KafkaReadStats & CommitStats;

const REPLAYABLE: SourceOrigin = Object.freeze({ kind: 'replayable' });

/**
 * A member of a Kafka consumer group (broker-managed positions).
 *
 * Rebalances, in stream order: when a rejoin starts, `batches()` stops
 * yielding; when it ends, queued batches of revoked partitions are dropped,
 * the listener hears `revoked` and then `assigned`, and only then are batches
 * of the new assignment yielded. Commits go through a gate that knows the
 * current assignment (see CommitGate): a commit for a partition this member
 * does not own is not sent, and resolves with a `dropped` outcome.
 */
export class KafkaGroupSource implements BrokerManagedSource {
  readonly regime = 'broker-managed' as const;
  readonly origin = REPLAYABLE;
  readonly cluster: string;
  readonly groupId: string;
  private readonly reader: KafkaReader;
  private readonly gate: CommitGate;
  private listener: ((event: AssignmentEvent) => void) | undefined;

  /** Use `kafkaSource({ mode: 'group', ... })`, which validates the options. */
  constructor(settings: KafkaGroupSettings) {
    this.cluster = settings.cluster;
    this.groupId = settings.groupId;
    for (const line of describeSettings(settings)) settings.debug(`thalweg source-kafka: ${line}`);
    this.reader = new KafkaReader(
      settings,
      consumerSettings(settings, settings.groupId, { kind: 'group', topics: settings.topics }),
      {
        event: (event) => {
          switch (event.kind) {
            case 'join-starting':
            case 'rebalancing':
              this.gate.joinStarting();
              return;
            case 'crashed':
              if (event.restart) this.gate.joinStarting();
              return;
            case 'fetching':
              this.gate.fetching();
              return;
            default:
              return;
          }
        },
        joined: (change) => {
          this.joined(change);
        },
        ended: (error) => {
          if (error === null) this.gate.end('closed', 'the source was closed');
          else this.gate.end('not-running', `the source failed: ${error.message}`);
        },
      },
    );
    this.gate = new CommitGate(
      (offsets) => this.reader.consumer.commit(offsets),
      (partition) => this.reader.yieldedEnd(partition),
      settings.onDroppedCommit,
      settings.log,
    );
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

  /**
   * Commits `next` (the next offset to read) for a partition this member
   * owns. Resolves once the broker took it, or once it was dropped: a commit
   * for a partition this member does not own is never sent, and is reported
   * to `onDroppedCommit` and counted in `stats().droppedCommits` (use
   * `tryCommit` to get the outcome). Rejects when the commit failed in a way
   * a retry may fix (the broker could not be reached, TWG_KAFKA_COMMIT_FAILED),
   * and refuses `next` beyond the end of the last batch yielded for the
   * partition (TWG_KAFKA_COMMIT_AHEAD): that would skip unread records.
   */
  async commit(partition: SourcePartition, next: number): Promise<void> {
    await this.gate.commit(partition, next);
  }

  /**
   * `commit`, with its outcome: `{ kind: 'committed' }` once the broker took
   * `next` (or an equal or higher offset), `{ kind: 'dropped', reason }` when
   * it was not sent or not taken (see DroppedCommitReason).
   */
  tryCommit(partition: SourcePartition, next: number): Promise<CommitOutcome> {
    return this.gate.commit(partition, next);
  }

  onAssignment(listener: (event: AssignmentEvent) => void): void {
    this.listener = listener;
  }

  stats(): KafkaGroupStats {
    return { ...this.reader.stats(), ...this.gate.stats() };
  }

  close(): Promise<void> {
    return this.reader.close();
  }

  private joined(change: AssignmentChange): void {
    // Ownership first, so a commit made from inside the listener is judged
    // against the new assignment.
    this.gate.joined(change.assignment);
    const listener = this.listener;
    if (listener === undefined) return;
    try {
      if (change.revoked.length > 0) listener({ kind: 'revoked', partitions: change.revoked });
      if (change.assigned.length > 0) listener({ kind: 'assigned', partitions: change.assigned });
    } catch (cause) {
      throw new KafkaSourceError(
        'TWG_KAFKA_LISTENER_FAILED',
        `the assignment listener threw: ${cause instanceof Error ? cause.message : String(cause)}; ` +
          'positions can no longer be trusted, so the source stops',
        { cause },
      );
    }
  }
}
