/**
 * The seam between the Pulsar sources and a Pulsar client. The sources need
 * only these operations and events; `webSocketPort` adapts Pulsar's
 * WebSocket API to them (ADR 0032), tests replace it with a fake to inject
 * faults, and another client could be adapted without touching the sources.
 * No client type appears here.
 *
 * Every session is on ONE partition's topic (`…-partition-N`, or the topic
 * itself when it is not partitioned), so a partition can be paused alone and
 * its permits are its own.
 */
export interface PulsarPort {
  /** Partitions of `topic` (its full name, `persistent://tenant/ns/name`); 0 when it is not partitioned. */
  partitions(topic: string): Promise<number>;
  /** A consumer of one partition on a subscription, in pull mode: nothing arrives before `permit`. */
  subscribe(settings: SubscribeSettings, events: SessionEvents): Promise<ConsumerSession>;
  /** A reader of one partition, starting AFTER `start` (exclusive), or at the earliest/latest message. */
  read(settings: ReadSettings, events: SessionEvents): Promise<ReaderSession>;
  /** Closes every session and what the port holds. */
  close(): Promise<void>;
}

export type SubscriptionType = 'Exclusive' | 'Failover' | 'Shared' | 'Key_Shared';

export interface SubscribeSettings {
  /** One partition's topic: `persistent://public/default/orders-partition-3`. */
  readonly topic: string;
  readonly subscription: string;
  readonly type: SubscriptionType;
  /** Where a new subscription starts; an existing one resumes where it was acknowledged. */
  readonly initialPosition: 'Earliest' | 'Latest';
  /**
   * Messages the session may hold ahead of its permits (at most 1000 on the
   * WebSocket API, whose proxy prefetches that many from the broker
   * whatever the client's pull-mode permits say). On a Shared or
   * Key_Shared subscription no other member gets what one holds until it
   * acknowledges or closes them, so this is the session's share of the
   * source's prefetch bound, not the API's maximum.
   */
  readonly receiverQueueSize: number;
  readonly consumerName?: string;
}

export interface ReadSettings {
  readonly topic: string;
  /** Base64 message id to resume after, or where to start. */
  readonly start:
    | { readonly kind: 'after'; readonly messageId: string }
    | { readonly kind: 'earliest' | 'latest' };
  /** Messages in flight before the reader waits for `release` (at most 1000 on the WebSocket API). */
  readonly receiverQueueSize: number;
}

/** One message as the broker delivered it; the id is Pulsar's own, in base64. */
export interface PulsarMessage {
  /** Base64 of the protobuf MessageIdData: the same on every redelivery. */
  readonly messageId: string;
  readonly payload: Uint8Array;
  /** The key as sent (absent: null; an empty key is ''). */
  readonly key: string | null;
  /** In the order the broker sent them. */
  readonly properties: readonly (readonly [name: string, value: string])[];
  /** Milliseconds since the epoch. */
  readonly publishTime: number;
  /** Milliseconds since the epoch; null when the producer set none. */
  readonly eventTime: number | null;
  readonly redeliveryCount: number;
}

/** Why a session ended: the socket's close code and reason, or an error. */
export interface SessionClosed {
  readonly code: number | null;
  readonly detail: string;
}

/**
 * What a session reports, in order, synchronously from the client. `closed`
 * comes once, last; a closed session delivers nothing more, and whatever it
 * delivered and was not acknowledged is redelivered to the next session.
 */
export interface SessionEvents {
  message(message: PulsarMessage): void;
  closed(why: SessionClosed): void;
}

/**
 * After `closed`, `permit`, `ack`, `nack` and `release` do nothing and never
 * throw. While open, an id this session did not deliver, or already acked
 * (released), is refused with TWG_PULSAR_MISUSE and nothing is sent: over
 * the WebSocket API an id the broker cannot decode closes the whole session.
 * Ids are compared as the broker sent them. The producer's id for the same
 * message may differ in its bytes (no batch_size in a batch, no partition
 * on a `-partition-N` topic): compare decoded positions, never producer ids.
 */
export interface ConsumerSession {
  /** Lets the broker send `n` more messages (pull mode). */
  permit(n: number): void;
  /**
   * Acknowledges one message individually (never cumulatively: on Shared and
   * Key_Shared a cumulative ack would cover what another consumer holds). Fire
   * and forget on the WebSocket API: a lost ack shows only as the session
   * closing, and costs a redelivery the record id absorbs.
   */
  ack(messageId: string): void;
  /** Asks for a redelivery of one message. */
  nack(messageId: string): void;
  close(): Promise<void>;
}

export interface ReaderSession {
  /** Hands a flow token back for a message taken, so the reader sends one more. */
  release(messageId: string): void;
  close(): Promise<void>;
}
