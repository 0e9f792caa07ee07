import type { ConfirmTarget, Lane, OffsetSpan, Sink } from '@thalweg/connector-core';
import type { ContractRecord, HeldRecord } from './contract-records.js';

/**
 * How a store answers a replay of records it already holds:
 * - `deduplicated`: it holds each record id once (a primary key, raw's one
 *   copy per offset, a map by id);
 * - `copies-identical`: it appends (Zerobus, a log); a replay may add copies,
 *   and every copy of an id must carry the same payload, so a reader that
 *   deduplicates by `_twg_record_id` sees each record once.
 */
export type ReplayBehaviour = 'deduplicated' | 'copies-identical';

/** Failures a subject can inject into its own durability step, for the failure-class cases. */
export type SinkFault =
  /** The next durability attempt fails with an error the sink classes as transient. */
  | 'transient'
  /** The next durability attempt fails with an error no retry can fix. */
  | 'fatal'
  /** The stream holding the next batch dies (poison): the sink rebuilds it and replays. */
  | 'poison'
  /**
   * Every attempt to make the next batch durable fails transiently: the
   * sink's retries run out on it, and it sets that batch aside (ADR 0025).
   */
  | 'exhausted';

/** One sink under test, with the means to see what its store durably holds. */
export interface SinkSubject<L extends Lane, B> {
  readonly sink: Sink<L, B>;
  /** The sink's batch type for these records of `span` (all of one partition). */
  batch(records: readonly ContractRecord[], span: OffsetSpan): B;
  /**
   * Every copy of every record the store durably holds now, read from the
   * store itself, not from the sink's memory. The contract calls it from
   * inside the confirmation target, so a sink that confirms before the
   * write is durable is caught there. Give this or `heldCount`.
   */
  readonly held?: () => Promise<readonly HeldRecord[]>;
  /**
   * For a store that keeps only how many records it made durable (copies
   * included), not the records: that number. The clauses that need the
   * records themselves (malformed, restart) cannot be declared with it.
   */
  readonly heldCount?: () => Promise<number>;
  /** Arms one fault (only those the factory declares). */
  readonly inject?: (fault: SinkFault) => void;
  /**
   * A batch the sink must refuse at submit, changing nothing (rows of the
   * wrong shape, records outside the span, an empty batch).
   */
  readonly malformed?: (records: readonly ContractRecord[], span: OffsetSpan) => B;
  /** Opens a new sink over the same store (after this one is closed): a restart. */
  readonly reopen?: (target: ConfirmTarget<L>) => Promise<SinkSubject<L, B>>;
  /** Releases the store (a table, a directory); the sink is already closed. */
  readonly dispose?: () => Promise<void>;
}

/** What the contract needs to make a fresh sink over a fresh store. */
export interface SinkContractFactory<L extends Lane, B> {
  readonly lane: L;
  readonly replay: ReplayBehaviour;
  /** The faults `inject` supports; their cases run only for these. */
  readonly faults?: readonly SinkFault[];
  /** Whether subjects offer `malformed`. */
  readonly refusesMalformed?: boolean;
  /** Whether subjects offer `reopen`. */
  readonly restarts?: boolean;
  /** Per-case timeout in ms (default 30 s). */
  readonly timeoutMs?: number;
  open(target: ConfirmTarget<L>): Promise<SinkSubject<L, B>>;
}
