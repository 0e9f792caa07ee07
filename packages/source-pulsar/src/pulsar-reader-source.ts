import {
  backoffDelay,
  checkOffset,
  partitionKey,
  sourcePartition,
  ThalwegError,
  type Cancel,
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
import type { PulsarMessage, ReadSettings, ReaderSession, SessionClosed } from './pulsar-port.js';
import type { PulsarPartitionStats } from './subscription-lane.js';
import { toHeldMessage, type HeldMessage } from './to-record.js';

/** Plain data, for tests and telemetry. */
export interface PulsarReaderStats {
  readonly messages: number;
  readonly batches: number;
  /** Flow tokens handed back to the readers. */
  readonly released: number;
  readonly reconnects: number;
  readonly sessionsOpen: number;
  readonly partitions: readonly PulsarPartitionStats[];
}

/** The last message of a yielded batch: where a cursor can point. */
interface Mark {
  readonly offset: number;
  readonly messageId: string;
}

/** Marks kept per partition before the oldest are dropped (a cursor then lags, never leads). */
const MAX_MARKS = 65_536;

interface Lane {
  readonly partition: SourcePartition;
  readonly topic: string;
  session: ReaderSession | null;
  generation: number;
  /** Where the next session starts: the sought cursor, then the last message yielded. */
  start: ReadSettings['start'];
  /** Messages below this are not taken: one past the last received (or the sought cursor). */
  floor: number;
  /** One past the last message yielded (or the sought cursor): the floor of a new session. */
  resumeFloor: number;
  /** Yielded while paused: their tokens go back on resume. */
  owed: string[];
  marks: Mark[];
  /** The newest mark a cursor was taken at, or the sought cursor. */
  base: Mark | null;
  attempts: number;
  cancelReopen: Cancel | undefined;
  lastOffset: number | null;
}

const REPLAYABLE: SourceOrigin = Object.freeze({ kind: 'replayable' });

/**
 * Pulsar readers (store-managed), one reader session per partition (ADR
 * 0032). The broker keeps no position: the offset store keeps a
 * `message-id` cursor per partition, and a reader resumes exactly after
 * the id in it. Flow tokens go back to a reader only as its messages are
 * yielded, and not while its partition is paused. A closed session is
 * opened again after a backoff, after the last message yielded.
 *
 * The partitions are listed once, when the source opens: the pipeline
 * positions store-managed partitions only at its start, so partitions
 * added later are not read (README).
 */
export class PulsarReaderSource implements StoreManagedSource {
  readonly regime = 'store-managed' as const;
  readonly origin = REPLAYABLE;
  readonly cluster: string;
  private readonly lanes = new Map<string, Lane>();
  private readonly feed: MessageFeed;
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
  }

  /** Opens the source: validates the options and lists the topics' partitions. */
  static async open(options: PulsarReaderOptions): Promise<PulsarReaderSource> {
    const source = new PulsarReaderSource(parseReaderOptions(options));
    const found: FoundPartition[] = [];
    await new PartitionDiscovery(source.settings.port, source.settings.topics, (f) => {
      found.push(f);
    }).start();
    for (const f of found) source.add(f);
    return source;
  }

  partitions(): readonly SourcePartition[] {
    return [...this.lanes.values()].map((l) => l.partition);
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    const lane = this.lane(partition, 'seek');
    if (this.started) {
      throw new PulsarSourceError('TWG_PULSAR_MISUSE', 'seek() after batches() was called', {
        partition,
      });
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
    let i = -1;
    while (i + 1 < lane.marks.length && (lane.marks[i + 1]?.offset ?? next) < next) i += 1;
    if (i >= 0) {
      lane.base = lane.marks[i] ?? null;
      lane.marks.splice(0, i + 1);
    }
    const base = lane.base;
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
      for (const lane of this.lanes.values()) void this.openSession(lane);
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
    const sessions: ReaderSession[] = [];
    for (const lane of this.lanes.values()) {
      lane.cancelReopen?.();
      lane.generation += 1;
      if (lane.session !== null) sessions.push(lane.session);
      lane.session = null;
    }
    await Promise.allSettled(sessions.map((s) => s.close()));
    await this.settings.port.close();
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

  private add({ partition, partitioned }: FoundPartition): void {
    this.lanes.set(partitionKey(partition), {
      partition,
      topic: sessionTopic(partition, partitioned),
      session: null,
      generation: 0,
      start: { kind: this.settings.startAt },
      floor: 0,
      resumeFloor: 0,
      owed: [],
      marks: [],
      base: null,
      attempts: 0,
      cancelReopen: undefined,
      lastOffset: null,
    });
  }

  private async openSession(lane: Lane): Promise<void> {
    lane.cancelReopen = undefined;
    const generation = ++lane.generation;
    const current = () => lane.generation === generation && this.closing === null;
    let session: ReaderSession;
    try {
      session = await this.settings.port.read(
        {
          topic: lane.topic,
          start: lane.start,
          receiverQueueSize: sessionShare(this.settings, this.lanes.size),
        },
        {
          message: (m) => {
            if (current()) this.received(lane, m);
          },
          closed: (why) => {
            if (current()) this.sessionClosed(lane, why);
          },
        },
      );
    } catch (error) {
      if (!current()) return;
      if (error instanceof ThalwegError && error.errorClass === 'fatal-config') {
        this.feed.fail(error);
        return;
      }
      this.settings.log(
        `thalweg source-pulsar: reading ${lane.topic} failed: ${describeError(error)}; trying again`,
      );
      this.scheduleReopen(lane);
      return;
    }
    if (!current()) {
      await session.close().catch(() => undefined);
      return;
    }
    lane.session = session;
    lane.attempts = 0;
  }

  private scheduleReopen(lane: Lane): void {
    lane.attempts += 1;
    const delay = backoffDelay(this.settings.reconnect, lane.attempts);
    lane.cancelReopen = this.settings.scheduler.after(delay, () => this.openSession(lane));
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
    this.scheduleReopen(lane);
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
    lane.marks.push({ offset: last.offset, messageId: last.messageId });
    if (lane.marks.length > MAX_MARKS) lane.base = lane.marks.shift() ?? lane.base;
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
