import type { RetryPolicy } from '@thalweg/connector-core';
import type { PackedBatch } from './packed-batch.js';
import type { SegmentLayout } from './segment-layout.js';

/**
 * The messages between `WorkerWriter` (the sink's thread) and
 * `segment-worker.js` (the writer thread). Bump `WORKER_PROTOCOL` with any
 * change here or in the packed layout: the worker runs from the compiled
 * `dist/`, and a worker of another build is refused at open instead of
 * misreading batches.
 */
export const WORKER_PROTOCOL = 2;

/** `workerData` of the writer thread. */
export interface WorkerInit {
  readonly protocol: number;
  /** Absolute; segments are written here. */
  readonly dir: string;
  /** Written into every segment's manifest. */
  readonly cluster: string;
  readonly retry: RetryPolicy;
  readonly maxSegmentBytes: number;
  readonly maxBatchesPerSegment: number;
  /** The sequence of the first segment this writer writes. */
  readonly nextSequence: number;
  /** False only for the benchmark's unchecked baseline (segment-codec.ts). */
  readonly checksums: boolean;
}

export type ToWorker =
  /** A batch to write after every batch sent before it; its buffer is transferred. */
  | { readonly type: 'batch'; readonly batch: PackedBatch }
  /** Write what is queued, then exit. */
  | { readonly type: 'end' }
  /** Tests only: exit at once with `code`, as a crashed thread would. */
  | { readonly type: 'test-exit'; readonly code: number };

export type FromWorker =
  | { readonly type: 'ready'; readonly protocol: number }
  /**
   * The buffers of the batches of a segment just written (transferred
   * back), for the next batches to be packed into.
   */
  | { readonly type: 'recycle'; readonly buffers: readonly ArrayBuffer[] }
  /**
   * Segment `file` (a name in the directory) is durable, listed in the
   * manifest with `layout`, and holds the next `batches` batches sent, in
   * order.
   */
  | {
      readonly type: 'durable';
      readonly file: string;
      readonly sequence: number;
      readonly layout: SegmentLayout;
      readonly batches: number;
    }
  /** Attempt `attempt` of segment `file` (a path) failed and will be retried. */
  | {
      readonly type: 'retry';
      readonly file: string;
      readonly attempt: number;
      readonly error: string;
    }
  /** Segment `file` (a path) could not be made durable; the thread writes nothing more. */
  | {
      readonly type: 'failed';
      readonly file: string;
      readonly reason: string;
      readonly cause: string;
    };
