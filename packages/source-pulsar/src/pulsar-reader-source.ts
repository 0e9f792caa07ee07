import {
  backoffDelay,
  checkOffset,
  partitionKey,
  sourcePartition,
  ThalwegError,
  type SourceBatch,
  type SourceCursor,
  type SourceOrigin,
  type SourcePartition,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import { describeError, PulsarSourceError } from './errors.js';
import { MessageFeed } from './message-feed.js';
import { decodeMessageId } from './message-id.js';
import {
  describeSettings,
  parseReaderOptions,
  sessionShare,
  type PulsarReaderOptions,
  type PulsarReaderSettings,
} from './options.js';
import { PartitionDiscovery, type FoundPartition } from './partition-discovery.js';
import { sessionTopic } from './partition-topic.js';
import type { PulsarMessage, ReaderSession, SessionClosed } from './pulsar-port.js';
import { closeLanes, SessionOpener } from './session-opener.js';
import { toHeldMessage, type HeldMessage } from './to-record.js';
import {
  advanceBase,
  mark,
  newReaderLane,
  type Lane,
  type PulsarReaderStats,
} from './reader-lane.js';

const REPLAYABLE: SourceOrigin = Object.freeze({ kind: 'replayable' });

/**
 * Pulsar readers (store-managed), one reader session per partition (ADR
 * 0032). The broker keeps no position: the offset store keeps a
 * `message-id` cursor per partition, and a reader resumes exactly after
 * the id in it. Flow tokens go back to a reader only as its messages are
 * yielded, and not while its partition is paused. A closed session is
 * opened again after a backoff, after the last message yielded.
 *
 * The partitions are listed when the source opens, and again every
 * `partitionPollMs` once it reads: a partition found then is handed to the
 * `onPartitionsFound` handler (the pipeline loads and seeks its stored
 * cursor) and read only once the handler is done.
 */
export class PulsarReaderSource implements StoreManagedSource {
  readonly regime = 'store-managed' as const;
  readonly origin = REPLAYABLE;
  readonly cluster: string;
  private readonly lanes = new Map<string, Lane>();
  private readonly feed: MessageFeed;
  private readonly discovery: PartitionDiscovery;
  private readonly opener: SessionOpener<Lane, ReaderSession>;
  private position: ((partitions: readonly SourcePartition[]) => Promise<void>) | undefined;
  private started = false;
  private closing: Promise<void> | null = null;
  private readonly counters = { messages: 0, batches: 0, released: 0, reconnects: 0 };

  private constructor(private readonly settings: PulsarReaderSettings) {
    this.cluster = settings.cluster;
    for (const line of describeSettings(settings, [`startAt=${settings.startAt}`])) {
      settings.debug(`thalweg source-pulsar: ${line}`);
    }
    this.feed = new MessageFeed(settings, {
      beforeTake: () => undefined,
      yielded: (partition, messages) => {
        this.yielded(partition, messages);
      },
      pauseChanged: (partition, paused) => {
        if (!paused) this.releaseOwed(partition);
      },
    });
    this.discovery = new PartitionDiscovery(settings.port, settings.topics, (f) => {
      this.found(f);
    });
    this.opener = new SessionOpener<Lane, ReaderSession>({
      scheduler: settings.scheduler,
      reconnect: settings.reconnect,
      log: settings.log,
      verb: 'reading',
      closing: () => this.closing !== null,
      fail: (error) => {
        this.feed.fail(error);
      },
      connect: (lane, events) =>
        settings.port.read(
          {
            topic: lane.topic,
            start: lane.start,
            receiverQueueSize: sessionShare(settings, this.lanes.size),
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
        lane.session = session;
      },
    });
  }

  /** Opens the source: validates the options and lists the topics' partitions. */
  static async open(options: PulsarReaderOptions): Promise<PulsarReaderSource> {
    const source = new PulsarReaderSource(parseReaderOptions(options));
    await source.discovery.start();
    return source;
  }

  onPartitionsFound(position: (partitions: readonly SourcePartition[]) => Promise<void>): void {
    this.position = position;
  }

  partitions(): readonly SourcePartition[] {
    return [...this.lanes.values()].map((l) => l.partition);
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    const lane = this.lane(partition, 'seek');
    if (lane.generation > 0) {
      throw new PulsarSourceError(
        'TWG_PULSAR_MISUSE',
        `seek() of ${where(partition)} after it began to be read`,
        { partition },
      );
    }
    if (cursor.kind !== 'message-id') {
      throw new PulsarSourceError(
        'TWG_PULSAR_CURSOR_INVALID',
        `${where(partition)}: a ${cursor.kind} cursor is not a Pulsar reader's (message-id)`,
        { partition },
      );
    }
    checkOffset(cursor.nextOffset, 'cursor.nextOffset');
    try {
      decodeMessageId(cursor.messageId);
    } catch (cause) {
      throw new PulsarSourceError(
        'TWG_PULSAR_CURSOR_INVALID',
        `${where(partition)}: the stored cursor's messageId ${JSON.stringify(cursor.messageId)} is not a message id`,
        { partition, cause },
      );
    }
    lane.start = { kind: 'after', messageId: cursor.messageId };
    lane.floor = cursor.nextOffset;
    lane.resumeFloor = cursor.nextOffset;
    lane.base = { offset: cursor.nextOffset - 1, messageId: cursor.messageId };
    lane.marks = [];
  }

  /**
   * The cursor of the last message yielded below `next` (its id, and the
   * offset after it): a reader resumes exactly after it. Marks older than
   * it are forgotten. Refused when nothing below `next` was yielded or sought.
   */
  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    const lane = this.lane(partition, 'cursorAt');
    checkOffset(next, 'next');
    const base = advanceBase(lane, next);
    if (base === null || base.offset >= next) {
      throw new PulsarSourceError(
        'TWG_PULSAR_MISUSE',
        `${where(partition)}: no message below offset ${String(next)} was yielded or sought, so there is no message id to resume after`,
        { partition },
      );
    }
    return { kind: 'message-id', messageId: base.messageId, nextOffset: base.offset + 1 };
  }

  batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    if (!this.started && this.closing === null) {
      this.started = true;
      for (const lane of this.lanes.values()) void this.opener.open(lane);
      this.discovery.poll(this.settings.scheduler, this.settings.partitionPollMs, (error) => {
        this.settings.log(
          `thalweg source-pulsar: listing partitions failed: ${describeError(error)}`,
        );
      });
    }
    return this.feed.batches(signal);
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

  stats(): PulsarReaderStats {
    return {
      ...this.counters,
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

  private async shutdown(): Promise<void> {
    this.feed.close();
    this.discovery.stop();
    await closeLanes(this.lanes.values(), this.settings.port);
  }

  private lane(partition: SourcePartition, what: string): Lane {
    const at = sourcePartition(partition.topic, partition.partition);
    const lane = this.lanes.get(partitionKey(at));
    if (lane === undefined) {
      throw new PulsarSourceError(
        'TWG_PULSAR_MISUSE',
        `${what}: ${where(at)} is not a partition of this source (${this.settings.topics.join(', ')})`,
        { partition: at },
      );
    }
    return lane;
  }

  /**
   * A partition listed: at open, a lane the pipeline positions before
   * reading; while reading, one positioned by the `onPartitionsFound`
   * handler first, then read. A handler that fails stops the source.
   */
  private found({ partition, partitioned }: FoundPartition): void {
    const key = partitionKey(partition);
    if (this.closing !== null || this.lanes.has(key)) return;
    const lane = newReaderLane(
      partition,
      sessionTopic(partition, partitioned),
      this.settings.startAt,
    );
    this.lanes.set(key, lane);
    if (!this.started) return;
    this.settings.log(`thalweg source-pulsar: found ${where(partition)}; reading it`);
    this.positionFound(lane);
  }

  /**
   * Has the handler position a partition found while reading, then reads
   * it. A configuration error (a hole in raw below its cursor, a bad
   * cursor) stops the source with that error; any other failure (the
   * offset store unreachable) is logged and tried again after a backoff.
   */
  private positionFound(lane: Lane): void {
    const position = this.position;
    if (position === undefined) {
      void this.opener.open(lane);
      return;
    }
    position([lane.partition]).then(
      () => {
        lane.attempts = 0;
        if (this.closing === null) void this.opener.open(lane);
      },
      (cause: unknown) => {
        if (this.closing !== null) return;
        if (cause instanceof ThalwegError && cause.errorClass !== 'transient') {
          this.feed.fail(cause);
          return;
        }
        this.settings.log(
          `thalweg source-pulsar: positioning ${where(lane.partition)} failed: ${describeError(cause)}; trying again`,
        );
        lane.attempts += 1;
        const delay = backoffDelay(this.settings.reconnect, lane.attempts);
        lane.cancelReopen = this.settings.scheduler.after(delay, () => {
          this.positionFound(lane);
        });
      },
    );
  }

  private sessionClosed(lane: Lane, why: SessionClosed): void {
    lane.generation += 1;
    lane.session = null;
    lane.owed = [];
    lane.floor = lane.resumeFloor;
    this.counters.reconnects += 1;
    // What was received and not yielded comes again from the next session.
    this.feed.purge(lane.partition);
    this.settings.log(
      `thalweg source-pulsar: reader on ${lane.topic} closed (${String(why.code)} ${why.detail}); ` +
        'reading again after the last message yielded',
    );
    this.opener.reopenLater(lane);
  }

  private received(lane: Lane, m: PulsarMessage): void {
    this.counters.messages += 1;
    let held: HeldMessage;
    try {
      held = toHeldMessage(m, lane.partition, this.settings.offsetBits);
    } catch (error) {
      this.feed.fail(error);
      return;
    }
    lane.lastOffset = held.offset;
    if (held.offset < lane.floor) {
      // Already yielded (or before the sought cursor): its token goes back at once.
      lane.session?.release(m.messageId);
      this.counters.released += 1;
      return;
    }
    lane.floor = held.offset + 1;
    this.feed.push(lane.partition, held);
  }

  private yielded(partition: SourcePartition, messages: readonly HeldMessage[]): void {
    const lane = this.lanes.get(partitionKey(partition));
    const last = messages[messages.length - 1];
    if (lane === undefined || last === undefined) return;
    this.counters.batches += 1;
    mark(lane, { offset: last.offset, messageId: last.messageId });
    lane.start = { kind: 'after', messageId: last.messageId };
    lane.resumeFloor = last.offset + 1;
    if (this.feed.isPaused(partition)) {
      for (const m of messages) lane.owed.push(m.messageId);
      return;
    }
    for (const m of messages) lane.session?.release(m.messageId);
    this.counters.released += messages.length;
  }

  private releaseOwed(partition: SourcePartition): void {
    const lane = this.lanes.get(partitionKey(partition));
    if (lane?.session == null || lane.owed.length === 0) return;
    const owed = lane.owed;
    lane.owed = [];
    for (const id of owed) lane.session.release(id);
    this.counters.released += owed.length;
  }
}

function where(p: SourcePartition): string {
  return `${p.topic} partition ${String(p.partition)}`;
}

/** Pulsar readers, their options validated (a refusal names `pulsarSource.<field>`) and partitions listed. */
export function pulsarReaderSource(options: PulsarReaderOptions): Promise<PulsarReaderSource> {
  return PulsarReaderSource.open(options);
}
