import { join } from 'node:path';
import type { EarlyAttempt } from './early-attempt.js';
import { RawSinkError, reasonOf } from './errors.js';
import { GrowingSegment, SLICE_BYTES, type GrowingSegmentDeps } from './growing-segment.js';
import type { PackedBatch } from './packed-batch.js';
import { MANIFEST_FILE, ManifestAppender } from './raw-manifest.js';
import { commitSegment } from './segment-commit.js';
import type { SegmentChunks } from './segment-encoder.js';
import type { SegmentFs } from './segment-fs.js';
import type { FromWorker, WorkerInit } from './worker-protocol.js';

/**
 * What the writer thread's loop runs on: the thread's settings (its
 * `workerData`, less the protocol number), the file system, and its two ends.
 */
export interface SegmentLoopDeps extends Omit<WorkerInit, 'protocol'> {
  readonly fs: SegmentFs;
  /**
   * The next batches, in the order they were sent: waits for at least one,
   * takes what is queued within the bounds; null once ended and drained.
   * The loop calls it again only once the last call resolved.
   */
  readonly take: (maxItems: number, maxBytes: number) => Promise<readonly PackedBatch[] | null>;
  /** Reports to the sink's thread (`recycle` carries buffers to transfer back). */
  readonly post: (message: FromWorker) => void;
  /**
   * Runs between slices of an encode (growing-segment.ts), after the slice
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
 * The writer thread's work (ADR 0053): segment k+1 grows while segment k
 * is made durable. Segment k's commit (write, fsyncs, rename, manifest
 * line) is IO on libuv's pool; meanwhile the loop adds each batch to
 * segment k+1 the moment it arrives, encoding it and writing each slice to
 * k+1's temp file (growing-segment.ts). When k's commit ends, k+1 is
 * closed with what it holds and its commit begins at once, and k+2 begins
 * to grow. So the disk always has a commit, and the encode runs beside it;
 * the source's next batches are encoded as they come instead of after a
 * wait. With nothing committing, what is queued becomes a segment at once.
 *
 * A segment also closes at its bounds (`maxBatchesPerSegment`,
 * `maxSegmentBytes`), then waits for the commit before it: at most two
 * segments are held, one committing and one closed or growing.
 *
 * Segment k+1 is committed only after segment k's commit resolved: its
 * fsync, rename, directory fsync and manifest line all come after segment
 * k's manifest line is fsynced, and its `durable` report after segment k's.
 *
 * A segment that cannot be encoded or made durable stops the loop: the
 * segment before it still finishes its commit and is reported (it is
 * durable), then `failed` names the file; the segment after it is never
 * committed: its temp file, if begun, is removed, its batches unconfirmed.
 */
export async function runSegmentLoop(d: SegmentLoopDeps): Promise<SegmentLoopEnd> {
  const manifest = await ManifestAppender.open(d.fs, join(d.dir, MANIFEST_FILE));
  /**
   * `failed`: set by the first segment that fails (a commit settles it while
   * the loop grows the next); `committing`: a commit is under way.
   */
  const state = { failed: false, committing: false };
  // Read through functions: a commit changes them while the loop awaits.
  const failed = (): boolean => state.failed;
  const commitUnderWay = (): boolean => state.committing;
  let signalFailure = (): void => undefined;
  /** Settles when a segment fails: an empty segment waiting for batches stops waiting. */
  const failure = new Promise<void>((resolve) => (signalFailure = resolve));
  const fail = (name: string, error: unknown): void => {
    if (state.failed) return;
    state.failed = true;
    signalFailure();
    const cause = error instanceof RawSinkError ? error.cause : error;
    d.post({
      type: 'failed',
      file: join(d.dir, name),
      reason: error instanceof RawSinkError ? error.reason : reasonOf(error),
      cause: reasonOf(cause),
    });
  };
  const commit = async (
    grown: GrowingSegment,
    segment: SegmentChunks,
    early: EarlyAttempt | undefined,
  ): Promise<void> => {
    if (state.failed) {
      await grown.abandon();
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
        grown.sequence,
        grown.name,
        segment,
        grown.batches.map((b) => ({ span: b.span, records: b.count })),
        early,
      );
    } catch (error) {
      fail(grown.name, error);
      return;
    }
    // Written: the chunks viewing the buffers are done with them.
    d.post({ type: 'recycle', buffers: grown.batches.map((b) => b.buffer) });
    d.post({
      type: 'durable',
      file: grown.name,
      sequence: grown.sequence,
      layout: segment.layout,
      batches: grown.batches.length,
    });
  };

  const deps: GrowingSegmentDeps = {
    fs: d.fs,
    dir: d.dir,
    cluster: d.cluster,
    checksums: d.checksums,
    maxSegmentBytes: d.maxSegmentBytes,
    maxBatchesPerSegment: d.maxBatchesPerSegment,
    pause: d.pause ?? nextTurn,
    sliceBytes: d.sliceBytes ?? SLICE_BYTES,
  };
  const intake = new Intake(() => d.take(d.maxBatchesPerSegment, d.maxSegmentBytes));
  /** Segment k's commit while k+1 grows (it never rejects: `fail` takes its error). */
  let committing: Promise<void> = Promise.resolve();
  let sequence = d.nextSequence;
  while (!failed()) {
    const segment = new GrowingSegment(deps, sequence);
    let closed: ReturnType<GrowingSegment['finish']>;
    try {
      await grow(segment, intake, { committing, failure }, commitUnderWay, failed);
      if (failed() || segment.empty) {
        // The commit before it failed, or the queue ended and drained.
        await segment.abandon();
        break;
      }
      closed = segment.finish();
    } catch (error) {
      await segment.abandon();
      await committing;
      fail(segment.name, error);
      break;
    }
    sequence++;
    const previous = committing;
    committing = previous.then(async () => {
      state.committing = true;
      await commit(segment, closed.segment, closed.early);
      state.committing = false;
    });
    // A segment closed at its bounds waits here for the commit before it.
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

/**
 * Adds batches to `segment` as they arrive, until it is to be closed: the
 * commit before it has ended (or none was under way) and it holds
 * something, it is at its bounds, the queue ended, or a commit failed.
 * Batches taken that it does not take are carried to the next segment: one
 * over its bounds, and those that follow the end of the commit before it
 * (they were taken while it ran).
 */
async function grow(
  segment: GrowingSegment,
  intake: Intake,
  /** The commit before this segment (it settles also when it fails), and the loop's failure. */
  ends: { readonly committing: Promise<void>; readonly failure: Promise<void> },
  commitUnderWay: () => boolean,
  failed: () => boolean,
): Promise<void> {
  for (;;) {
    if (failed() || segment.full || (!segment.empty && !commitUnderWay())) return;
    // An empty segment waits for batches (or a failure, which ends the
    // loop); one that holds some also wakes when the commit before it
    // ends, to close.
    const taken = await intake.next(segment.empty ? ends.failure : ends.committing);
    if (taken === 'woken') continue;
    if (taken === null) return;
    // Taken while a commit runs: added until it ends (the encode pauses let
    // it go on). Taken with none under way: all added, then closed.
    const during = commitUnderWay();
    for (let i = 0; i < taken.length; i++) {
      const batch = taken[i] as PackedBatch;
      const commitEnded = during && !commitUnderWay();
      if (!segment.fits(batch) || (!segment.empty && commitEnded)) {
        intake.carry(taken.slice(i));
        return;
      }
      await segment.add(batch);
    }
  }
}

/**
 * The loop's end of `take`: one take at a time (a take the loop stopped
 * waiting on is kept for the next segment), and the batches a segment did
 * not add, handed out first.
 */
class Intake {
  private carried: readonly PackedBatch[] = [];
  private pending: Promise<readonly PackedBatch[] | null> | null = null;
  private ended = false;

  constructor(private readonly take: () => Promise<readonly PackedBatch[] | null>) {}

  /**
   * The next batches, in order; null once the queue ended and drained;
   * `woken` if `wake` settled first (the take goes on, for the next call).
   */
  async next(wake: Promise<void>): Promise<readonly PackedBatch[] | null | 'woken'> {
    if (this.carried.length > 0) {
      const carried = this.carried;
      this.carried = [];
      return carried;
    }
    if (this.ended) return null;
    this.pending ??= this.take();
    const pending = this.pending;
    const first = await Promise.race([
      pending.then(() => 'taken' as const),
      wake.then(() => 'woken' as const),
    ]);
    if (first === 'woken') return 'woken';
    const taken = await pending;
    this.pending = null;
    if (taken === null) this.ended = true;
    return taken;
  }

  /** Batches taken and not added: the next call returns them, before anything else. */
  carry(batches: readonly PackedBatch[]): void {
    this.carried = batches;
  }
}
