import {
  checkOffset,
  partitionKey,
  sourcePartition,
  type AssignmentEvent,
  type BrokerManagedSource,
  type SourceBatch,
  type SourceOrigin,
  type SourcePartition,
} from '@thalweg/connector-core';
import { describeError, PulsarSourceError } from './errors.js';
import { MessageFeed } from './message-feed.js';
import {
  describeSettings,
  parseSubscriptionOptions,
  sessionShare,
  type PulsarSubscriptionOptions,
  type PulsarSubscriptionSettings,
} from './options.js';
import { PartitionDiscovery, type FoundPartition } from './partition-discovery.js';
import { sessionTopic } from './partition-topic.js';
import type { ConsumerSession, PulsarMessage, SessionClosed } from './pulsar-port.js';
import { closeLanes, SessionOpener } from './session-opener.js';
import {
  acksBelow,
  newLane,
  type Lane,
  type PulsarDroppedCommitReason,
  type PulsarSubscriptionStats,
} from './subscription-lane.js';
import { toHeldMessage, type HeldMessage } from './to-record.js';

const REPLAYABLE: SourceOrigin = Object.freeze({ kind: 'replayable' });

/**
 * A Pulsar subscription (broker-managed), one consumer session per
 * partition in pull mode (ADR 0032). Nothing is acknowledged before
 * `commit`, and `commit` acknowledges individually, on the session that
 * delivered them, the messages yielded below `next`.
 *
 * A message that arrives below what the partition already took (a
 * redelivery after a negative ack or on Shared, a consumer that died)
 * starts a new epoch: it and everything after it are held; once everything
 * yielded before is committed, the partition is reported revoked and then
 * assigned, and the held messages are yielded. A closed session reports
 * its partition revoked at once, and a new one is opened after a backoff,
 * reported assigned: what the old one delivered and was not acknowledged
 * comes again, and the record id absorbs it.
 *
 * `logEnd` is not offered: the WebSocket API says nothing of a topic's end.
 */
export class PulsarSubscriptionSource implements BrokerManagedSource {
  readonly regime = 'broker-managed' as const;
  readonly origin = REPLAYABLE;
  readonly cluster: string;
  private readonly lanes = new Map<string, Lane>();
  private readonly feed: MessageFeed;
  private readonly discovery: PartitionDiscovery;
  private readonly opener: SessionOpener<Lane, ConsumerSession>;
  private listener: ((event: AssignmentEvent) => void) | undefined;
  private started: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private readonly counters = {
    messages: 0,
    batches: 0,
    acksSent: 0,
    epochResets: 0,
    reconnects: 0,
  };
  private readonly dropped: Record<PulsarDroppedCommitReason, number> = {
    'not-owned': 0,
    closed: 0,
  };

  /** Use `pulsarSubscriptionSource`, which validates the options. */
  constructor(private readonly settings: PulsarSubscriptionSettings) {
    this.cluster = settings.cluster;
    for (const line of describeSettings(settings, [
      `subscription=${settings.subscription}`,
      `type=${settings.type}`,
      `initialPosition=${settings.initialPosition}`,
    ])) {
      settings.debug(`thalweg source-pulsar: ${line}`);
    }
    this.feed = new MessageFeed(settings, {
      beforeTake: () => {
        this.resetEpochs();
      },
      yielded: (partition, messages) => {
        this.yielded(partition, messages);
      },
      pauseChanged: (partition, paused) => {
        if (!paused) this.topUp(partition);
      },
    });
    this.discovery = new PartitionDiscovery(settings.port, settings.topics, (found) => {
      this.found(found);
    });
    this.opener = new SessionOpener<Lane, ConsumerSession>({
      scheduler: settings.scheduler,
      reconnect: settings.reconnect,
      log: settings.log,
      verb: 'subscribing',
      closing: () => this.closing !== null,
      fail: (error) => {
        this.feed.fail(error);
      },
      connect: (lane, events) =>
        settings.port.subscribe(
          {
            topic: lane.topic,
            subscription: settings.subscription,
            type: settings.type,
            initialPosition: settings.initialPosition,
            // What the proxy prefetches is held from the other members of a
            // Shared subscription: no more than this session's share.
            receiverQueueSize: sessionShare(settings, this.discovery.count()),
          },
          events,
        ),
      message: (lane, m) => {
        this.received(lane, m);
      },
      closed: (lane, why) => {
        this.sessionClosed(lane, why);
      },
      opened: (lane, session) => {
        this.sessionOpened(lane, session);
      },
    });
  }

  batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    const feed = this.feed;
    const start = () => this.start();
    return (async function* () {
      await start();
      yield* feed.batches(signal);
    })();
  }

  prefetchFill(): number {
    return this.feed.prefetchFill();
  }

  pause(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) this.feed.hold(sourcePartition(p.topic, p.partition), 'pipeline');
  }

  resume(partitions: readonly SourcePartition[]): void {
    for (const p of partitions)
      this.feed.release(sourcePartition(p.topic, p.partition), 'pipeline');
  }

  onAssignment(listener: (event: AssignmentEvent) => void): void {
    this.listener = listener;
  }

  /**
   * Acknowledges, one by one on the session that delivered them, the
   * messages of `partition` yielded below `next` and not acknowledged yet.
   * Never a cumulative ack, never a message not yielded. A partition not
   * owned now (its session closed, or never read here) acknowledges
   * nothing: the commit is dropped and counted.
   */
  commit(partition: SourcePartition, next: number): Promise<void> {
    try {
      const at = sourcePartition(partition.topic, partition.partition);
      checkOffset(next, 'next');
      if (this.closing !== null) {
        this.dropped.closed += 1;
        return Promise.resolve();
      }
      const lane = this.lanes.get(partitionKey(at));
      if (lane?.owned !== true || lane.session === null) {
        this.dropped['not-owned'] += 1;
        return Promise.resolve();
      }
      const acks = acksBelow(lane, next);
      for (const d of acks) d.session.ack(d.messageId);
      this.counters.acksSent += acks.length;
      if (lane.held !== null) this.feed.notify();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  stats(): PulsarSubscriptionStats {
    return {
      ...this.counters,
      droppedCommits: { ...this.dropped },
      sessionsOpen: [...this.lanes.values()].filter((l) => l.session !== null).length,
      partitions: [...this.lanes.values()].map((l) => ({
        topic: l.partition.topic,
        partition: l.partition.partition,
        lastOffset: l.lastOffset,
      })),
    };
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private start(): Promise<void> {
    this.started ??= (async () => {
      try {
        await this.discovery.start();
      } catch (error) {
        this.feed.fail(error);
        return;
      }
      this.discovery.poll(this.settings.scheduler, this.settings.partitionPollMs, (error) => {
        this.settings.log(
          `thalweg source-pulsar: listing partitions failed: ${describeError(error)}`,
        );
      });
    })();
    return this.started;
  }

  private async shutdown(): Promise<void> {
    this.feed.close();
    this.discovery.stop();
    await this.started;
    await closeLanes(this.lanes.values(), this.settings.port);
  }

  private found({ partition, partitioned }: FoundPartition): void {
    if (this.closing !== null) return;
    const key = partitionKey(partition);
    if (this.lanes.has(key)) return;
    const lane = newLane(partition, sessionTopic(partition, partitioned));
    this.lanes.set(key, lane);
    void this.opener.open(lane);
  }

  private sessionOpened(lane: Lane, session: ConsumerSession): void {
    lane.session = session;
    lane.granted = 0;
    lane.owned = true;
    this.emit({ kind: 'assigned', partitions: [lane.partition] });
    this.topUp(lane.partition);
  }

  private sessionClosed(lane: Lane, why: SessionClosed): void {
    lane.generation += 1;
    lane.session = null;
    this.counters.reconnects += 1;
    this.settings.log(
      `thalweg source-pulsar: session on ${lane.topic} closed (${String(why.code)} ${why.detail}); ` +
        `${String(lane.unacked.length)} messages not acknowledged will come again`,
    );
    this.feed.purge(lane.partition);
    lane.unacked = [];
    lane.held = null;
    lane.acceptedEnd = null;
    lane.granted = 0;
    if (lane.owned) {
      lane.owned = false;
      this.emit({ kind: 'revoked', partitions: [lane.partition] });
    }
    this.opener.reopenLater(lane);
  }

  /** A message from the session (`fresh`), or a held one taken again after an epoch reset. */
  private received(lane: Lane, m: PulsarMessage, fresh = true): void {
    if (fresh) {
      if (lane.granted > 0) lane.granted -= 1;
      this.counters.messages += 1;
    }
    if (lane.held !== null) {
      lane.held.push(m);
      return;
    }
    this.accept(lane, m);
  }

  /** A message in the current epoch, or the first of a new one. */
  private accept(lane: Lane, m: PulsarMessage): void {
    let held: HeldMessage;
    try {
      held = toHeldMessage(m, lane.partition, this.settings.offsetBits);
    } catch (error) {
      this.fail(error);
      return;
    }
    lane.lastOffset = held.offset;
    if (lane.acceptedEnd !== null && held.offset < lane.acceptedEnd) {
      lane.held = [m];
      this.feed.notify();
      return;
    }
    lane.acceptedEnd = held.offset + 1;
    this.feed.push(lane.partition, held);
  }

  private yielded(partition: SourcePartition, messages: readonly HeldMessage[]): void {
    const lane = this.lanes.get(partitionKey(partition));
    if (lane?.session == null) return;
    this.counters.batches += 1;
    const session = lane.session;
    for (const m of messages)
      lane.unacked.push({ offset: m.offset, messageId: m.messageId, session });
    this.topUp(partition);
  }

  /**
   * Starts the new epoch of every partition whose held messages wait only
   * for the earlier ones to be committed: revoked, assigned, then the held
   * messages are taken (which may start another epoch).
   */
  private resetEpochs(): void {
    for (const lane of this.lanes.values()) {
      if (lane.held === null || lane.unacked.length > 0) continue;
      if (this.feed.pending(lane.partition) > 0) continue;
      const held = lane.held;
      lane.held = null;
      lane.acceptedEnd = null;
      this.counters.epochResets += 1;
      this.settings.log(
        `thalweg source-pulsar: ${lane.topic} delivered below what it delivered before; ` +
          'everything before is acknowledged, so it starts a new epoch (revoked, then assigned)',
      );
      this.emit({ kind: 'revoked', partitions: [lane.partition] });
      this.emit({ kind: 'assigned', partitions: [lane.partition] });
      for (const m of held) this.received(lane, m, false);
      this.topUp(lane.partition);
    }
  }

  /** Grants the session what it lacks of its share, unless its partition is paused. */
  private topUp(partition: SourcePartition): void {
    const lane = this.lanes.get(partitionKey(partition));
    if (lane?.session == null || this.feed.isPaused(partition) || this.closing !== null) return;
    const share = sessionShare(this.settings, this.discovery.count());
    const taken = this.feed.pending(partition) + (lane.held?.length ?? 0);
    const want = share - lane.granted - taken;
    // In steps of at least half the share, as a consumer's receiver queue
    // refills: one permit frame per message would cost a frame each way.
    if (want <= 0 || (lane.granted + taken > 0 && want < Math.ceil(share / 2))) return;
    lane.granted += want;
    lane.session.permit(want);
  }

  private emit(event: AssignmentEvent): void {
    const listener = this.listener;
    if (listener === undefined) return;
    try {
      listener(event);
    } catch (cause) {
      this.fail(
        new PulsarSourceError(
          'TWG_PULSAR_MISUSE',
          `the assignment listener threw: ${describeError(cause)}; positions can no longer be trusted, so the source stops`,
          { cause },
        ),
      );
    }
  }

  private fail(error: unknown): void {
    this.feed.fail(error);
    for (const lane of this.lanes.values()) this.feed.hold(lane.partition, 'stopped');
  }
}

/** A Pulsar subscription, its options validated (a refusal names `pulsarSource.<field>`). */
export function pulsarSubscriptionSource(
  options: PulsarSubscriptionOptions,
): PulsarSubscriptionSource {
  return new PulsarSubscriptionSource(parseSubscriptionOptions(options));
}
