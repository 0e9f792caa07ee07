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

/** Ranges of one destination to union into a tier. */
export interface CoverageDelta {
  readonly key: CoverageKey;
  readonly ranges: readonly CoveredRange[];
}

/**
 * What every tier can do: union-merge ranges (never replace), read them back,
 * and keep source cursors. A durable tier (Postgres, S3) is what a new owner
 * reads after a rebalance and what recovery plans from.
 *
 * `merge` is for ranges that were already proven durable — by receipts passed
 * to `CoverageStore.recordDurable`, or by a local tier being checkpointed.
 */
export interface CoverageTier {
  merge(deltas: readonly CoverageDelta[]): Promise<void>;
  /** The covered ranges of one destination, in normal form. */
  covered(key: CoverageKey): Promise<RangeSet>;
  /** Every destination this tier holds coverage for. */
  destinations(): Promise<CoverageKey[]>;
  /**
   * Stores the position of a store-managed source (never of a broker-managed
   * one). A saved cursor never moves back: of two cursors the one with the
   * higher `nextOffset` wins, because every writer saves only durable
   * positions (an operator moves one back with `rewindCursor`, nothing else).
   */
  saveCursor(key: CursorKey, cursor: SourceCursor): Promise<void>;
  /**
   * The operator's way back to a hole in raw: replaces the stored cursor
   * with a LOWER one (or one at the same position), the only path by which a
   * cursor moves back. Safe because a rewind is lag: the source re-reads
   * records raw may already hold, and every re-read record carries the
   * record id of its first read, so raw and the secondaries deduplicate it.
   * Refused with `TWG_COVERAGE_REWIND_REFUSED`, changing nothing, when no
   * cursor is stored, when the kind differs, or when it would move forward.
   * Run it with the source stopped: a running source saves its own later
   * position again on its next durable acknowledgement.
   */
  rewindCursor(key: CursorKey, cursor: SourceCursor): Promise<void>;
  loadCursor(key: CursorKey): Promise<SourceCursor | null>;
  /**
   * Whether this tier keeps coverage for `sink` (its `sinks` option). Every
   * write for another sink is refused (`TWG_COVERAGE_UNKNOWN_SINK`), so a
   * pipeline asks at open, before a single coverage write can fail.
   */
  knows(sink: SinkId): boolean;
  close(): Promise<void>;
}

/**
 * Gap-aware write coverage per sink, as a pipeline uses it. Every backend
 * merges by union and never loses a recorded range; a call that fails
 * changes nothing.
 */
export interface CoverageStore extends CoverageTier {
  /** Records the spans of durable receipts as covered for their sinks. */
  recordDurable(receipts: readonly DurableReceipt[]): Promise<void>;
  /**
   * What the destination is missing within `[from, to)`. An impossible
   * window (negative, not a safe integer, `from > to`) is refused with
   * `TWG_COVERAGE_RANGE_INVALID`, as the writes refuse impossible ranges.
   */
  gaps(key: CoverageKey, from: number, to: number): Promise<CoveredRange[]>;
  /** Makes everything recorded so far durable in this store's durable tier. */
  checkpoint(): Promise<void>;
}
