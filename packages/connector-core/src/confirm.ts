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
 * Where confirmations go. The sink's ack lane calls `apply` once per batch,
 * in ascending offset order, only after the durable acknowledgement; the
 * embedder (the pipeline) decides what a raw anchor or a coverage record does.
 */
export interface ConfirmTarget<L extends Lane> {
  apply(confirm: Confirm<L>, receipt: Receipt): Promise<void>;
}

export function rawAnchor(span: OffsetSpan): RawAnchorConfirm {
  return { kind: 'raw-anchor', span };
}

export function derivedCoverage(sink: SinkId, span: OffsetSpan): DerivedCoverageConfirm {
  return { kind: 'derived-coverage', sink, span };
}

export const NO_CONFIRM: NoConfirm = Object.freeze({ kind: 'none' });
