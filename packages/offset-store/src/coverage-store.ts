import type { DurableKind, Receipt, SinkId, SourceCursor } from '@thalweg/connector-core';
import type { CoveredRange } from './covered-range.js';
import type { RangeSet } from './range-set.js';

/** Whose coverage: one destination sink, for one source partition. */
export interface CoverageKey {
  readonly sink: SinkId;
  readonly topic: string;
  readonly partition: number;
}

/**
 * A receipt that proves a durable acknowledgement. Coverage is recorded only
 * from these — the type is the calling convention: coverage written before
 * the sink's durable ack would over-claim, and an over-claim is a batch that
 * recovery never replays (silent loss). Lag costs a replay; lead costs data.
 */
export type DurableReceipt = Receipt & { readonly durability: DurableKind };

/** Where a store-managed source's cursor is kept: per source and partition. */
export interface CursorKey {
  readonly source: string;
  readonly topic: string;
  readonly partition: number;
}

/**
 * Gap-aware write coverage per sink, and the cursor of store-managed sources.
 * Every backend merges by union and never loses a recorded range; every
 * method that fails changes nothing.
 */
export interface CoverageStore {
  /** Records the spans of durable receipts as covered for their sinks. */
  recordDurable(receipts: readonly DurableReceipt[]): Promise<void>;
  /** The covered ranges of one destination, in normal form. */
  covered(key: CoverageKey): Promise<RangeSet>;
  /** What the destination is missing within `[from, to)`. */
  gaps(key: CoverageKey, from: number, to: number): Promise<CoveredRange[]>;
  /** Every destination this store holds coverage for. */
  destinations(): Promise<CoverageKey[]>;
  /** Makes everything recorded so far durable in this store's durable tier. */
  checkpoint(): Promise<void>;
  /** Stores the position of a store-managed source (never of a broker-managed one). */
  saveCursor(key: CursorKey, cursor: SourceCursor): Promise<void>;
  loadCursor(key: CursorKey): Promise<SourceCursor | null>;
  close(): Promise<void>;
}
