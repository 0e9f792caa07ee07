import { channel, subscribe, unsubscribe, type Channel } from 'node:diagnostics_channel';
import type { Lane } from '../confirm.js';
import type { QuarantineReason } from '../flow-control/quarantine-lane.js';
import type { OffsetSpan, SourcePartition } from '../offset-span.js';
import type { SinkId } from '../sink-id.js';

/** The source yielded a batch and the pipeline took it (before raw saw it). */
export interface BatchReadEvent {
  readonly span: OffsetSpan;
  readonly records: number;
  readonly bytes: number;
}

/** The pipeline handed a batch to a sink's lane (accepted, not durable). */
export interface SubmittedEvent {
  readonly sink: SinkId;
  readonly lane: Lane;
  readonly span: OffsetSpan;
  readonly records: number;
}

/** A sink's durable step made a burst durable with one wait. */
export interface DurableEvent {
  readonly sink: SinkId;
  /** The sink's stream (a Zerobus stream's index; `0` for a sink with one lane). */
  readonly stream: string;
  /** Batches the one wait covered: the coalesce ratio of this burst. */
  readonly batches: number;
  /** When the burst's oldest batch was accepted, and when the step said durable (epoch ms). */
  readonly firstSubmittedAt: number;
  readonly durableAt: number;
}

/** One batch's durable confirmation was applied (position or coverage may advance). */
export interface ConfirmedEvent {
  readonly sink: SinkId;
  readonly stream: string;
  readonly span: OffsetSpan;
  readonly records: number;
  /** Accepted to durable, in milliseconds. */
  readonly latencyMs: number;
}

/** A source position was committed: everything before `next` is durable in raw. */
export interface CommittedEvent {
  readonly partition: SourcePartition;
  readonly next: number;
}

/** One record was refused and went to the quarantine lane (raw still holds it). */
export interface QuarantinedEvent {
  readonly sink: string;
  readonly reason: QuarantineReason;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

/** A sink's stream died and was built again; what it owed is re-sent. */
export interface StreamRebuiltEvent {
  readonly sink: SinkId;
  readonly stream: string;
  readonly cause: string;
}

/**
 * The one vocabulary of what happens to a batch on its way, by channel name
 * (`thalweg:<package>:<event>`, as undici and other Node libraries name
 * theirs). Tracing subscribes to these channels, and metrics that need each
 * event (a histogram of latencies) are recorded from them. Publishing costs
 * nothing while a channel has no subscriber: publishers check `active`
 * before they build a message.
 */
export interface ThalwegEvents {
  'thalweg:pipeline:batch-read': BatchReadEvent;
  'thalweg:pipeline:submitted': SubmittedEvent;
  'thalweg:connector-core:durable': DurableEvent;
  'thalweg:connector-core:confirmed': ConfirmedEvent;
  'thalweg:pipeline:committed': CommittedEvent;
  'thalweg:pipeline:quarantined': QuarantinedEvent;
  'thalweg:sink-zerobus:stream-rebuilt': StreamRebuiltEvent;
}

export type ThalwegEventName = keyof ThalwegEvents;

/** One named channel whose messages are typed by the vocabulary. */
export class EventChannel<N extends ThalwegEventName> {
  private readonly channel: Channel;

  constructor(readonly name: N) {
    this.channel = channel(name);
  }

  /** Whether anyone listens: check it before building a message. */
  get active(): boolean {
    return this.channel.hasSubscribers;
  }

  publish(message: ThalwegEvents[N]): void {
    this.channel.publish(message);
  }

  /** Listens until the returned function is called. */
  subscribe(listener: (message: ThalwegEvents[N]) => void): () => void {
    const handler = (message: unknown): void => listener(message as ThalwegEvents[N]);
    subscribe(this.name, handler);
    return () => {
      unsubscribe(this.name, handler);
    };
  }
}

/** Every channel of the vocabulary, by a short name. */
export const events = {
  batchRead: new EventChannel('thalweg:pipeline:batch-read'),
  submitted: new EventChannel('thalweg:pipeline:submitted'),
  durable: new EventChannel('thalweg:connector-core:durable'),
  confirmed: new EventChannel('thalweg:connector-core:confirmed'),
  committed: new EventChannel('thalweg:pipeline:committed'),
  quarantined: new EventChannel('thalweg:pipeline:quarantined'),
  streamRebuilt: new EventChannel('thalweg:sink-zerobus:stream-rebuilt'),
} as const satisfies { readonly [k: string]: EventChannel<ThalwegEventName> };

/** Every channel name, in the vocabulary's order. */
export const EVENT_NAMES: readonly ThalwegEventName[] = Object.values(events).map((c) => c.name);
