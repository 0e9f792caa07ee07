import { join } from 'node:path';
import { EarlyAttempt } from './early-attempt.js';
import { RawSinkError, reasonOf } from './errors.js';
import type { PackedBatch } from './packed-batch.js';
import { MANIFEST_FILE, ManifestAppender } from './raw-manifest.js';
import { commitSegment } from './segment-commit.js';
import { packedSegmentChunksInSlices, SLICE_BYTES, type SegmentChunks } from './segment-encoder.js';
import type { SegmentFs } from './segment-fs.js';
import { segmentName } from './segment-name.js';
import type { FromWorker, WorkerInit } from './worker-protocol.js';

/**
 * What the writer thread's loop runs on: the thread's settings (its
 * `workerData`, less the protocol number), the file system, and its two ends.
 */
export interface SegmentLoopDeps extends Omit<WorkerInit, 'protocol'> {
  readonly fs: SegmentFs;
  /**
   * The next segment's batches, in the order they were sent: waits for at
   * least one, takes what is queued within the bounds; null once ended and
   * drained.
   */
  readonly take: (maxItems: number, maxBytes: number) => Promise<readonly PackedBatch[] | null>;
  /** What is queued now, within the bounds, without waiting: maybe nothing. */
  readonly takeReady: (maxItems: number, maxBytes: number) => readonly PackedBatch[];
  /** Reports to the sink's thread (`recycle` carries buffers to transfer back). */
  readonly post: (message: FromWorker) => void;
  /**
   * Runs between slices of an encode (segment-encoder.ts), after the slice
   * is written to the segment's temp file, so the thread's pending callbacks
   * run and the previous segment's commit goes on while the next is
   * encoded. Default: one turn of the event loop (setImmediate).
   */
  readonly pause?: () => Promise<void>;
  /** Bytes encoded between two pauses; default SLICE_BYTES (1 MiB). */
  readonly sliceBytes?: number;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** How the loop ended: drained after `end`, or stopped at a segment it could not make durable. */
export type SegmentLoopEnd = 'ended' | 'failed';

/**
 * The writer thread's work, double-buffered: while segment k is being made
 * durable (its write, fsyncs, rename and manifest line are IO on libuv's
 * pool), the loop takes what is queued and encodes segment k+1 (CPU). The
 * encode pauses between slices, so each step of k's commit is issued as soon
 * as the one before it completes: a cycle costs the larger of the two, not
 * their sum. Each slice is written to k+1's temp file as it is encoded
 * (early-attempt.ts), so the disk takes k+1's bytes during k's fsync. A
 * burst of less than a slice waits for k's commit instead, and takes what
 * came meanwhile with it: a segment that small gains nothing from being
 * encoded early, and on its own would cost a whole round of fsyncs.
 *
 * Segment k+1 is committed only after segment k's commit resolved: its
 * fsync, rename, directory fsync and manifest line all come after
 * segment k's manifest line is fsynced, and its `durable` report after
 * segment k's. At most two segments are held: one committing, one encoded.
 *
 * A segment that cannot be encoded or made durable stops the loop: the
 * segment before it still finishes its commit and is reported (it is
 * durable), then `failed` names the file; the segment after it was encoded
 * and never committed: its temp file is removed, its batches unconfirmed.
 */
export async function runSegmentLoop(d: SegmentLoopDeps): Promise<SegmentLoopEnd> {
  const manifest = await ManifestAppender.open(d.fs, join(d.dir, MANIFEST_FILE));
  let sequence = d.nextSequence;
  /**
   * `failed`: set by the first segment that fails (a commit settles it while
   * the loop takes the next); `committing`: a commit is under way.
   */
  const state = { failed: false, committing: false };
  // Read through functions: a commit changes them while the loop awaits.
  const failed = (): boolean => state.failed;
  const commitUnderWay = (): boolean => state.committing;
  const fail = (name: string, error: unknown): void => {
    if (state.failed) return;
    state.failed = true;
    const cause = error instanceof RawSinkError ? error.cause : error;
    d.post({
      type: 'failed',
      file: join(d.dir, name),
      reason: error instanceof RawSinkError ? error.reason : reasonOf(error),
      cause: reasonOf(cause),
    });
  };
  const commit = async (
    seq: number,
    name: string,
    segment: SegmentChunks,
    burst: readonly PackedBatch[],
    early: EarlyAttempt,
  ): Promise<void> => {
    if (state.failed) {
      await early.abandon();
      return;
    }
    try {
      await commitSegment(
        {
          fs: d.fs,
          dir: d.dir,
          retry: d.retry,
          onRetry: (file, attempt, error) =>
            d.post({ type: 'retry', file, attempt, error: reasonOf(error) }),
        },
        manifest,
        seq,
        name,
        segment,
        burst.map((b) => ({ span: b.span, records: b.count })),
        early,
      );
    } catch (error) {
      fail(name, error);
      return;
    }
    // Written: the chunks viewing the buffers are done with them.
    d.post({ type: 'recycle', buffers: burst.map((b) => b.buffer) });
    d.post({
      type: 'durable',
      file: name,
      sequence: seq,
      layout: segment.layout,
      batches: burst.length,
    });
  };

  /** Segment k's commit while k+1 is taken and encoded (it never rejects: `fail` takes its error). */
  let committing: Promise<void> = Promise.resolve();
  const slice = d.sliceBytes ?? SLICE_BYTES;
  while (!failed()) {
    let burst = await d.take(d.maxBatchesPerSegment, d.maxSegmentBytes);
    if (burst === null) break;
    const bytes = burst.reduce((n, b) => n + b.bytes, 0);
    if (commitUnderWay() && bytes < slice) {
      // Less than a slice while segment k commits: wait for that commit and
      // take what came meanwhile too. This segment's commit could not begin
      // sooner, and a segment of a batch or two would cost a whole round of
      // fsyncs (after the source waited on a full lane, the first batch it
      // sends would otherwise make a segment of its own).
      await committing;
      if (failed()) break;
      burst = [
        ...burst,
        ...d.takeReady(d.maxBatchesPerSegment - burst.length, d.maxSegmentBytes - bytes),
      ];
    }
    const seq = sequence++;
    const name = segmentName(seq);
    let segment: SegmentChunks;
    // The segment's temp file is written slice by slice as it is encoded.
    const early = await EarlyAttempt.begin(d.fs, d.dir, seq);
    try {
      segment = await packedSegmentChunksInSlices(
        d.cluster,
        burst,
        d.checksums,
        async (chunks) => {
          await early.write(chunks);
          await (d.pause ?? nextTurn)();
        },
        d.sliceBytes,
      );
    } catch (error) {
      await early.abandon();
      await committing;
      fail(name, error);
      break;
    }
    const previous = committing;
    const taken = burst;
    committing = previous.then(async () => {
      state.committing = true;
      await commit(seq, name, segment, taken, early);
      state.committing = false;
    });
    await previous;
  }
  await committing;
  if (state.failed) {
    await manifest.close().catch(() => undefined);
    return 'failed';
  }
  await manifest.close();
  return 'ended';
}
