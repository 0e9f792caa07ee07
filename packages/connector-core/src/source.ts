import type { OffsetSpan, SourcePartition } from './offset-span.js';
import type { SourceCursor } from './source-cursor.js';
import type { SourceHeaders } from './source-headers.js';

/** One record as read from a source, before any decoding. */
export interface SourceRecord {
  readonly offset: number;
  readonly key: Uint8Array | null;
  /** The payload; empty for a tombstone (see `tombstone`). */
  readonly value: Uint8Array;
  /** Milliseconds since the epoch, as the source reports it. */
  readonly timestamp: number;
  /** In the order the source delivered them; a name may repeat (source-headers.ts). */
  readonly headers: SourceHeaders;
  /**
   * Present (and true) when the source delivered no value at all, as a Kafka
   * delete in a compacted topic does; `value` is then empty. It is not a
   * header, so no header a producer sets can be mistaken for it.
   */
  readonly tombstone?: true;
}

/**
 * A run of records of one partition. `span` covers every offset the batch
 * accounts for, which can exceed `records.length`: a compacted topic or a
 * transaction marker leaves offsets with no record, and committing past them
 * is correct once the records around them are durable.
 */
export interface SourceBatch {
  readonly span: OffsetSpan;
  readonly records: readonly SourceRecord[];
}

/**
 * Whether the origin can be read again. A replayable origin (a broker, files,
 * a table) costs only reprocessing when our position is lost; a
 * non-replayable one (an IPC or Flight stream, a socket) loses data unless its
 * producer can resume from a token we kept.
 */
export type SourceOrigin =
  | { readonly kind: 'replayable' }
  | { readonly kind: 'non-replayable'; readonly resumable: boolean };

/**
 * A change of which partitions this member reads. A consumer group moves
 * partitions between members on a rebalance: after `revoked`, nothing may be
 * committed for those partitions by this member (kafkajs#1046), and
 * acknowledgements still in flight for them are dropped, never applied.
 * Sources with a fixed assignment (files, manual assignment) never emit.
 */
export type AssignmentEvent =
  | { readonly kind: 'assigned'; readonly partitions: readonly SourcePartition[] }
  | { readonly kind: 'revoked'; readonly partitions: readonly SourcePartition[] };

interface SourceBase {
  /** A stable name of the origin (a Kafka cluster id, a bucket, a host). It is hashed into every record id. */
  readonly cluster: string;
  readonly origin: SourceOrigin;
  /** Yields batches until `signal` aborts or the source ends. */
  batches(signal: AbortSignal): AsyncIterable<SourceBatch>;
  /**
   * Fill of the source's own bounded prefetch (fetched, not yet yielded),
   * 0..1: a channel signal of flow control. Batches held back because the
   * pipeline paused their partition are not counted (that queue is full by
   * the pipeline's own hand). A source that fetches only when asked has no
   * prefetch, and omits it.
   */
  prefetchFill?(): number;
  /**
   * Where each partition's log ends as the source last saw it (the offset
   * the next record will get, e.g. Kafka's high watermark), for the source
   * lag metric: log end minus the committed position. Read from what the
   * client already fetched, never by a request of its own; a partition not
   * fetched yet is absent. A source with no such notion omits it.
   */
  logEnd?(): readonly PartitionEnd[];
  /** Stops fetching the given partitions (backpressure); batches already yielded are unaffected. */
  pause(partitions: readonly SourcePartition[]): void;
  resume(partitions: readonly SourcePartition[]): void;
  close(): Promise<void>;
  /**
   * Registers the listener for assignment changes (one listener; a later call
   * replaces it). The source calls it synchronously, BEFORE it yields any
   * batch of a newly assigned partition and after it stopped yielding batches
   * of a revoked one, so the listener sees the change in stream order.
   */
  onAssignment?(listener: (event: AssignmentEvent) => void): void;
}

/** Where one partition's log ends: the offset its next record will get. */
export interface PartitionEnd {
  readonly partition: SourcePartition;
  readonly next: number;
}

/**
 * The broker holds the position (a Kafka consumer group, a Pulsar
 * subscription). `commit` stores `next` (the next offset to read) on the
 * broker; the caller guarantees everything before `next` is durable in raw.
 */
export interface BrokerManagedSource extends SourceBase {
  readonly regime: 'broker-managed';
  commit(partition: SourcePartition, next: number): Promise<void>;
}

/**
 * No broker holds the position (files, IPC streams, Kafka with manual
 * assignment, Pulsar readers): the offset store keeps a cursor for it.
 * `cursorAt` translates "everything before `next` is durable" into the
 * source's own cursor; `seek` resumes a partition from a stored cursor
 * before the first call to `batches`. A source that can neither rewind nor
 * resume must give a cursor for any `next`: started again, it reads a new
 * stream, and the pipeline seeks it past everything raw holds so the new
 * rows are numbered on from there, never over raw's.
 */
export interface StoreManagedSource extends SourceBase {
  readonly regime: 'store-managed';
  /** The partitions this source reads, known before `batches` is called. */
  partitions(): readonly SourcePartition[];
  cursorAt(partition: SourcePartition, next: number): SourceCursor;
  /**
   * Resumes `partition` from a stored cursor: called before `batches`, or
   * for a partition found later, from the `onPartitionsFound` handler
   * before that partition is read.
   */
  seek(partition: SourcePartition, cursor: SourceCursor): void;
  /**
   * Registers how partitions found after the source opened (a topic that
   * grew) are positioned; one handler, a later call replaces it. The source
   * reads nothing of them before the handler's promise resolves: the
   * handler loads their stored cursors and seeks them (a partition found
   * while running may still have one: another process may have read it).
   * A rejection fails the source, so no partition is read from a position
   * nobody checked. Without a handler, a found partition is read from the
   * source's configured start. A source whose partitions are fixed omits it.
   */
  onPartitionsFound?(position: (partitions: readonly SourcePartition[]) => Promise<void>): void;
}

/**
 * A source declares its regime; the regime is a property of the source's
 * configuration (Kafka in a group vs. Kafka with manual assignment), not of
 * its transport.
 */
export type Source = BrokerManagedSource | StoreManagedSource;
export type PositionRegime = Source['regime'];

/** The facts about a source that topology validation decides on. */
export interface SourceDescriptor {
  readonly regime: PositionRegime;
  readonly origin: SourceOrigin;
}
