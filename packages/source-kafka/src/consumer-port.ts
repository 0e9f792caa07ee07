import type { ColumnsWriter, SourcePartition } from '@thalweg/connector-core';

/**
 * The seam between the source and a Kafka client. The source needs only
 * these operations and these events; `kafkajsConsumer` adapts kafkajs to
 * them, tests wrap it (or replace it) to inject faults, and another client
 * could be adapted without touching the source. No client type appears here.
 */
export interface ConsumerPort {
  connect(): Promise<void>;
  /** Subscribes to the topics of `settings.assignment`. */
  subscribe(): Promise<void>;
  /**
   * Starts the fetch loop. `onBatch` receives every non-empty batch of one
   * partition and must return quickly: the client fetches again (and
   * heartbeats) only after it returns. Resolves once the first join ended.
   */
  run(onBatch: (batch: FetchedBatch) => void): Promise<void>;
  /** Commits `next` (the next offset to read) for each partition, in one request. */
  commit(offsets: readonly CommitOffset[]): Promise<CommitResult>;
  /** Moves the fetch position of an assigned partition; applied before its next fetch. */
  seek(partition: SourcePartition, offset: number): void;
  pause(partitions: readonly SourcePartition[]): void;
  resume(partitions: readonly SourcePartition[]): void;
  /** Leaves the group and closes the connections. */
  disconnect(): Promise<void>;
}

export interface CommitOffset {
  readonly topic: string;
  readonly partition: number;
  readonly next: number;
}

/**
 * How a commit ended when it did not fail outright. `ownership-changed`: the
 * group moved on (rebalance in progress, illegal generation, unknown member),
 * so this member may no longer own the partitions. `not-running`: the client
 * accepted the call but sent nothing (kafkajs does that when its runner has
 * stopped, during a crash or a shutdown). Any other failure rejects.
 */
export type CommitResult =
  | { readonly kind: 'applied' }
  | { readonly kind: 'ownership-changed'; readonly detail: string }
  | { readonly kind: 'not-running'; readonly detail: string };

/**
 * One header as the client read it off the wire, in the record's order (a
 * name may repeat). A client adapter must deliver the list exactly: kafkajs's
 * own `headers` object loses order, repeats and prototype names
 * (kafkajs-headers.ts recovers the list).
 */
export type FetchedHeader = readonly [name: string, value: Uint8Array | null];

export interface FetchedMessage {
  /** Decimal offset, as Kafka's 64-bit offsets do not fit a number in general. */
  readonly offset: string;
  readonly key: Uint8Array | null;
  /** `null` is a tombstone. */
  readonly value: Uint8Array | null;
  /** Milliseconds since the epoch, decimal. */
  readonly timestamp: string;
  readonly headers: readonly FetchedHeader[];
}

/** Where a fetched batch of one partition lies in its log. */
export interface FetchedSpan {
  readonly topic: string;
  readonly partition: number;
  /**
   * The first offset the fetch returned at or after the fetch position,
   * including records the client filtered out (aborted transactions, control
   * records); null when there is none.
   */
  readonly firstOffset: string | null;
  /** The last offset this batch accounts for; the client resumes after it. */
  readonly lastOffset: string;
  /**
   * The partition's high watermark when the broker answered the fetch
   * (decimal): the offset its next record will get, where its log ends.
   */
  readonly highWatermark: string;
}

/** A batch as message objects, one per record (kafkajs decodes into these). */
export interface FetchedMessages extends FetchedSpan {
  readonly kind: 'messages';
  /** Records for the caller: control records and aborted transactions removed. */
  readonly messages: readonly FetchedMessage[];
}

/**
 * A batch the adapter writes straight into record columns, with no object
 * or decimal offset per record (the @platformatic/kafka adapter). Control
 * records and aborted transactions are already removed. `write` is called
 * while the batch is delivered, not later: it reads the fetch response.
 */
export interface FetchedColumns extends FetchedSpan {
  readonly kind: 'columns';
  /** How many records the batch holds. */
  readonly count: number;
  /**
   * Writes the records at offset `start` or after into `writer`: `begin`
   * with their sizes, then each record appended, in offset order. The caller
   * `finish`es (or `abandon`s) the batch. Returns how many records lay
   * before `start`. Throws a `KafkaSourceError` naming the offset of a
   * record it cannot represent.
   */
  write(writer: ColumnsWriter, start: number): number;
}

export type FetchedBatch = FetchedMessages | FetchedColumns;

/** How many records a fetched batch holds, in either form. */
export function fetchedCount(batch: FetchedBatch): number {
  return batch.kind === 'columns' ? batch.count : batch.messages.length;
}

/**
 * What the client reports about the group, in the order it happens:
 *
 * - `join-starting`: a (re)join request is about to be sent; from here until
 *   `joined` the previous assignment may already be gone;
 * - `rebalancing`: the group told us to rejoin (comes before `join-starting`
 *   when the broker triggered it);
 * - `joined`: the new assignment of this member;
 * - `fetching`: the fetch loop runs (commits are sent again);
 * - `filtered-batch`: a fetch returned only records the client filtered out
 *   (aborted transactions, control records, compacted leftovers); its offsets
 *   still count, so the source reports an empty batch for them;
 * - `crashed`: the client failed; with `restart` it rejoins by itself.
 */
export type ConsumerEvent =
  | { readonly kind: 'join-starting' }
  | { readonly kind: 'rebalancing' }
  | { readonly kind: 'joined'; readonly assignment: readonly SourcePartition[] }
  | { readonly kind: 'fetching' }
  | { readonly kind: 'filtered-batch'; readonly batch: FetchedBatch }
  | { readonly kind: 'crashed'; readonly error: Error; readonly restart: boolean };

export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

/** Everything a client adapter needs to build a consumer. */
export interface ConsumerSettings {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly assignment:
    | { readonly kind: 'group'; readonly topics: readonly string[] }
    | { readonly kind: 'fixed'; readonly partitions: readonly SourcePartition[] };
  /** Where a partition without a committed position (or cursor) starts. */
  readonly fromBeginning: boolean;
  readonly maxBytes: number;
  readonly maxBytesPerPartition: number;
  readonly minBytes: number;
  readonly maxWaitTimeInMs: number;
  readonly sessionTimeout: number;
  readonly rebalanceTimeout: number;
  readonly heartbeatInterval: number;
  readonly logLevel: KafkaLogLevel;
  readonly log: (line: string) => void;
}

/**
 * Builds a consumer. `events` is called synchronously, from inside the
 * client, in the order things happen; it never throws.
 */
export type ConsumerFactory = (
  settings: ConsumerSettings,
  events: (event: ConsumerEvent) => void,
) => ConsumerPort;
