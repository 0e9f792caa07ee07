import type { Lane, OffsetSpan, Sink } from '@thalweg/connector-core';
import type { RecordBatch } from 'apache-arrow';
import type { ArrowBatch } from './encoded-batch.js';
import type { DeliveredOffset, SubmittedOffset } from './stream-watermarks.js';

/** A record batch and the source offsets it carries. */
export interface SpannedBatch {
  readonly batch: RecordBatch;
  readonly span: OffsetSpan;
  /** Bytes charged to the byte budget for this batch; released on confirmation. */
  readonly bytes: number;
}

/** The progress of one stream of a batch sink, for metrics and for recovery. */
export interface StreamProgress {
  readonly stream: string;
  readonly submitted: SubmittedOffset;
  readonly delivered: DeliveredOffset;
  readonly pending: number;
}

/**
 * The substrate every batch-oriented sink implements. `submit` (from `Sink`)
 * returns when the batch is accepted, not when it is durable; the durable
 * confirmation is reported separately, through the `ConfirmTarget` the sink
 * was built with, from a background ack lane per stream. It takes a batch
 * to encode or one encoded already (a worker thread's derivation's).
 */
export interface BatchSink<L extends Lane> extends Sink<L, ArrowBatch> {
  /** Submitted and delivered high-water marks, one entry per stream. */
  progress(): readonly StreamProgress[];
}
