import type { QuarantineReason } from '../flow-control/quarantine-lane.js';
import type { ReplayableSink, Sink } from '../sink.js';
import type { Source, SourceBatch, SourceRecord } from '../source.js';
import type { PartContext, SinkContext } from './part-context.js';

export type MaybePromise<T> = T | Promise<T>;

/**
 * What a secondary derivation is handed with each raw batch: the record id
 * raw gave each record (the library owns it, so no derivation recomputes it
 * with a cluster string of its own) and a way to refuse one record without
 * refusing the batch. Raw keeps a quarantined record; the secondary never
 * sees it.
 */
export interface DeriveContext {
  /** `_twg_record_id` of a record of this batch, as raw hashes it (16 bytes, ADR 0003). */
  recordId(record: SourceRecord): Buffer;
  quarantine(record: SourceRecord, reason: QuarantineReason, detail: string): void;
}

/**
 * Raw batch -> the secondary's batch (null when nothing of it is left to
 * write). It must be deterministic: recovery derives the same raw batch
 * again and expects the same rows. It may answer later (a promise), as a
 * derivation run on a worker thread does; it may call `context.quarantine`
 * until it answers.
 */
export type Derivation<B> = (batch: SourceBatch, context: DeriveContext) => MaybePromise<B | null>;

/** A derivation that answers at once, on the calling thread (a row mapping's). */
export type SyncDerivation<B> = (batch: SourceBatch, context: DeriveContext) => B | null;

/**
 * A secondary's lane between raw and its sink, declared with the part (the
 * pipeline's per-secondary settings; its `SecondaryConfigInput` is this type,
 * and a type test proves it agrees with the pipeline's validator).
 */
export interface LaneSettings {
  /**
   * Accept a secondary that cannot confirm durability. Its coverage is then
   * never recorded (there is no durable acknowledgement to record it after),
   * so recovery does not repair it: the opt-out trades repair for throughput.
   * @defaultValue false
   */
  allowNonDurable?: boolean | undefined;
  /**
   * Batches held at most in the secondary's own queue between raw submission
   * and its sink. When it is full, batches are shed and stay coverage gaps
   * for recovery to replay: a slow secondary must never hold up the source or
   * raw.
   * @defaultValue 256
   */
  maxQueuedBatches?: number | undefined;
  /**
   * Bytes held at most in that queue; either bound sheds.
   * @defaultValue `min(memoryLimitBytes / 16, 64 MiB)`: a sixteenth of the
   * pipeline's memory limit, at most 64 MiB (64 MiB at the default limit of
   * 1 GiB, 32 MiB at 512 MiB)
   */
  maxQueuedBytes?: number | undefined;
}

/** A source, declared: opened by the topology with its context. */
export interface SourcePart<S extends Source = Source> {
  readonly role: 'source';
  open(context: PartContext): MaybePromise<S>;
}

/** What a raw part opened: the sink, its own statistics and what it holds besides. */
export interface OpenedRaw<St> {
  readonly sink: ReplayableSink<SourceBatch>;
  stats(): St;
}

/**
 * The primary-raw sink, declared. `home` is the local directory raw lives
 * in, when it has one: coverage defaults to LevelDB next to it (ADR 0029).
 */
export interface RawPart<St = unknown> {
  readonly role: 'primary-raw';
  /** The sink id (default `raw`). */
  readonly id?: string;
  /** Where coverage is kept when the topology is not given a store: LevelDB in this directory. */
  readonly coverageHome?: string;
  open(context: SinkContext<'primary-raw'>): MaybePromise<OpenedRaw<St>>;
}

/** What a secondary part opened. */
export interface OpenedSecondary<B, St> {
  readonly sink: Sink<'secondary', B>;
  readonly derive: Derivation<B>;
  stats(): St;
  /** Releases what the part opened besides the sink (a pool it created); after the sink closed. */
  release?(): Promise<void>;
}

/** A secondary sink with its derivation from raw, declared. */
export interface SecondaryPart<B = unknown, St = unknown> {
  readonly role: 'secondary';
  readonly lane?: LaneSettings;
  open(context: SinkContext<'secondary'>): MaybePromise<OpenedSecondary<B, St>>;
}

/** The statistics type a declared sink part reports. */
export type PartStats<P> =
  P extends SecondaryPart<unknown, infer St> ? St : P extends RawPart<infer St> ? St : never;
