import type { Source, SourceHeaders, SourcePartition } from '@thalweg/connector-core';

/** A record the contract asks a fixture to write into its origin. */
export interface WrittenRecord {
  readonly key: Uint8Array | null;
  readonly value: Uint8Array;
  readonly headers: SourceHeaders;
  readonly tombstone?: true;
}

/** A record as a source over the origin must deliver it (the timestamp is the source's own). */
export interface ExpectedRecord extends WrittenRecord {
  readonly offset: number;
}

/** One partition of an origin and what a source reading it from the start delivers. */
export interface ExpectedLog {
  readonly partition: SourcePartition;
  readonly records: readonly ExpectedRecord[];
}

/** What an origin can carry; the contract writes only what it can. */
export interface SourceFeatures {
  /** How many partitions the origin can be written with (a file set is one). */
  readonly partitions: number;
  readonly keys: boolean;
  /** Header lists: repeated names, prototype names, order kept. */
  readonly headers: boolean;
  /** Headers sent without a value (`null`), apart from empty ones. */
  readonly nullHeaderValues: boolean;
  readonly tombstones: boolean;
  /**
   * Where a store-managed source can place a cursor: at any offset, or
   * only at the end of a batch it delivered (a file set remembers those).
   */
  readonly cursors: 'any-offset' | 'batch-boundaries';
  /**
   * `dense`: every offset of a partition is a record, so its log starts at 0
   * and each span starts where the one before it ended. `sparse`: offsets
   * name positions with room between them (Pulsar packs ledger, entry and
   * batch index into one), so a span may start past the end of the one
   * before it; spans still never overlap and come in order.
   */
  readonly offsets: 'dense' | 'sparse';
}

/** An origin the contract wrote, and the means to read it. */
export interface SourceFixture {
  /** What a source reading from the start must deliver, per partition. */
  readonly logs: readonly ExpectedLog[];
  /**
   * A new source over the origin. For a broker-managed source, every
   * source of one fixture is a member of the same group, so the second
   * resumes from what the first committed.
   */
  open(): Promise<Source>;
  dispose?(): Promise<void>;
}

/** Bad input from the origin, and where the error must say it is. */
export interface BadInput {
  /** Runs the source over the bad input; must reject. */
  readonly run: () => Promise<unknown>;
  /** Strings the error's message must contain (a file name, a field, an offset). */
  readonly names: readonly string[];
}

export interface SourceContractFactory {
  readonly features: SourceFeatures;
  /** Per-case timeout in ms (default 30 s); also bounds every wait for a batch. */
  readonly timeoutMs?: number;
  /** Writes `logs` (one list per partition, offsets from 0) into a fresh origin. */
  seed(logs: readonly (readonly WrittenRecord[])[]): Promise<SourceFixture>;
  /** Bad input the source must refuse with a coded error naming where. */
  readonly badInput?: () => Promise<BadInput>;
}
