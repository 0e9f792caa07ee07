import type { Confirm, Lane, SetAside } from '../confirm.js';
import type { OffsetSpan } from '../offset-span.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import type { Sized } from './submit-queue.js';

/** Where a batch stands in its lane's order: an offset, a sequence number. */
export type Position = number | bigint;

/** One batch on a lane, from acceptance to confirmation. */
export interface Pending<P extends Position, L extends Lane> extends Sized {
  /** Strictly ascending in submission order: the order of confirmation. */
  readonly position: P;
  readonly confirm: Confirm<L>;
  readonly span: OffsetSpan;
  readonly records: number;
  /** The receipt's bytes when they differ from the queue's cost `bytes`. */
  readonly receiptBytes?: number;
  /** Milliseconds since the epoch when the sink accepted the batch. */
  readonly submittedAt: number;
}

/** A batch the durable step made durable: it is confirmed. */
export interface DurableSettlement<E> {
  readonly entry: E;
  readonly kind?: 'durable';
  /** The receipt's bytes, known only after the step (an encoded size). */
  readonly bytes?: number;
  /** When the step made it durable; when it was handed over otherwise. */
  readonly at?: number;
}

/**
 * A batch the durable step gave up on and went past (a poison batch, or one
 * whose retries were exhausted): settled in its place in the order, never
 * confirmed; the target's `setAside` hears why.
 */
export interface SetAsideSettlement<E> {
  readonly entry: E;
  readonly kind: 'set-aside';
  readonly refusal: SetAside;
}

/**
 * How one batch of a burst left the durable step. A primary-raw lane's
 * batches can only be durable: raw keeps every record, so a raw sink that
 * tried to set one aside does not compile.
 */
export type Settlement<E> =
  E extends Pending<Position, 'primary-raw'>
    ? DurableSettlement<E>
    : DurableSettlement<E> | SetAsideSettlement<E>;

/** Either settlement, as the lane handles them inside (its entries' lane is generic there). */
export type AnySettlement<E> = DurableSettlement<E> | SetAsideSettlement<E>;

/** What a durable step knows of the burst it makes durable. */
export interface BurstContext<P extends Position, E> {
  /**
   * The burst's largest position so far (it grows with `more`): one wait on
   * it covers the whole burst.
   */
  readonly last: P;
  readonly metrics: DeliveryMetrics;
  /**
   * Takes what was queued on the lane since the burst was taken (within the
   * burst bounds, none once the lane failed) and makes it part of this
   * burst, returned in order: a step whose wait has not started yet (a
   * transport whose wait holds its stream, see ADR 0010) places that one
   * wait after everything submitted so far. The step must make these durable
   * too; the burst is counted (coalesce) at its final size.
   */
  more(): readonly E[];
  /**
   * Hands the next batches of the burst (in order) to the confirmations
   * before the step is over, when it made them durable one by one. What the
   * step did not hand over is settled as durable once it resolves.
   */
  settle(settled: readonly Settlement<E>[]): Promise<void>;
}

/**
 * A sink's own durability step: resolves once every batch of `burst` is
 * durable (fsync + rename, COMMIT, a server's acknowledgement); throws when
 * it cannot be made so, which ends the lane. It never confirms anything.
 */
export type DurableStep<P extends Position, E> = (
  burst: readonly E[],
  context: BurstContext<P, E>,
) => Promise<void>;
