import { ThalwegError } from './errors.js';
import type { OffsetSpan } from './offset-span.js';
import type { Receipt } from './receipt.js';
import type { SinkId } from './sink-id.js';

/**
 * The lane a stream belongs to. The primary-raw lane gates the source; a
 * secondary lane records its own coverage and gates nothing.
 */
export type Lane = 'primary-raw' | 'secondary';

/** After raw's durable ack: the source position may advance to `span.end`. */
export interface RawAnchorConfirm {
  readonly kind: 'raw-anchor';
  readonly span: OffsetSpan;
}

/** After a secondary's durable ack: `span` may be recorded as covered for `sink`. */
export interface DerivedCoverageConfirm {
  readonly kind: 'derived-coverage';
  readonly sink: SinkId;
  readonly span: OffsetSpan;
}

/** Nothing to do after confirmation (quarantine writes, probes). */
export interface NoConfirm {
  readonly kind: 'none';
}

/**
 * The action a sink performs after a batch is durably confirmed, as data
 * rather than a closure, typed by lane: a secondary stream cannot hold a
 * raw-anchor token and the primary-raw stream cannot hold a coverage token.
 * Cross-lane bleed is therefore a compile error, not a review item.
 */
export type Confirm<L extends Lane = Lane> = L extends 'primary-raw'
  ? RawAnchorConfirm | NoConfirm
  : L extends 'secondary'
    ? DerivedCoverageConfirm | NoConfirm
    : never;

/**
 * Why a secondary's sink set a batch aside instead of making it durable:
 *
 * - `poison`: the sink can never accept this batch (PostgreSQL refused its
 *   data, the table has no column for it); retrying or replaying it meets
 *   the same refusal;
 * - `retry-exhausted`: a transient failure outlasted the sink's retry policy
 *   on this batch; the sink itself is still usable, and a replay later,
 *   once the destination is healthy again, can succeed.
 *
 * Either way nothing of the batch is durable in the sink, and the sink goes
 * on with the next batch. Raw never sets a batch aside: it keeps every record.
 */
export type SetAside =
  | { readonly reason: 'poison'; readonly error: Error }
  | { readonly reason: 'retry-exhausted'; readonly error: Error };

/**
 * The hook a SECONDARY target offers for a batch its sink set aside; for
 * the primary-raw lane it is `never`, so a raw target with a set-aside path
 * does not compile (raw keeps every record, ADR 0025).
 */
export type SetAsideHook<L extends Lane> = L extends 'secondary'
  ? (confirm: Confirm<'secondary'>, span: OffsetSpan, refusal: SetAside) => Promise<void>
  : never;

/**
 * Where confirmations go. The sink's ack lane calls `apply` once per batch,
 * in ascending offset order, only after the durable acknowledgement; the
 * embedder (the pipeline) decides what a raw anchor or a coverage record does.
 * A batch a secondary's sink set aside is settled in its place in that order
 * through `setAside` instead (never both, never `apply` for it).
 */
export interface ConfirmTarget<L extends Lane> {
  apply(confirm: Confirm<L>, receipt: Receipt): Promise<void>;
  readonly setAside?: SetAsideHook<L>;
}

/**
 * What a rejected `submit` says about the batch: a set-aside when the
 * sink refused that batch alone and takes the next (an error of scope
 * `batch`, ThalwegError), null when the sink itself failed (or the error is
 * not one of ours), which ends the caller's lane.
 */
export function setAsideOf(error: unknown): SetAside | null {
  if (!(error instanceof ThalwegError) || error.scope !== 'batch') return null;
  if (error.errorClass === 'poison') return { reason: 'poison', error };
  if (error.errorClass === 'transient') return { reason: 'retry-exhausted', error };
  return null;
}

export function rawAnchor(span: OffsetSpan): RawAnchorConfirm {
  return { kind: 'raw-anchor', span };
}

export function derivedCoverage(sink: SinkId, span: OffsetSpan): DerivedCoverageConfirm {
  return { kind: 'derived-coverage', sink, span };
}

export const NO_CONFIRM: NoConfirm = Object.freeze({ kind: 'none' });
