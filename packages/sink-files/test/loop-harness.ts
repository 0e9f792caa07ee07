import { waitFor } from '@thalweg/test-services';
import {
  BufferPool,
  SubmitQueue,
  type OffsetSpan,
  type SourceBatch,
} from '@thalweg/connector-core';
import { BatchPacker } from '../src/batch-packer.js';
import type { SegmentFs } from '../src/index.js';
import type { PackedBatch } from '../src/packed-batch.js';
import { runSegmentLoop, type SegmentLoopEnd } from '../src/segment-loop.js';
import type { FromWorker } from '../src/worker-protocol.js';
import { CLUSTER, type FaultyFs, openSink } from './helpers.js';

// The writer thread's loop (segment-loop.ts) run in the test's thread, for
// segment-loop.test.ts and segment-loop-power-loss.test.ts.

export interface Loop {
  readonly done: Promise<SegmentLoopEnd>;
  readonly messages: FromWorker[];
  /** Calls of `take`: one per segment begun, and the last that finds the queue ended. */
  readonly takes: () => number;
  /** The spans of the batches the loop reported durable, in the order it reported them. */
  readonly durable: () => OffsetSpan[];
  /** Hands the loop one more batch (a loop started with `open`). */
  readonly push: (batch: SourceBatch) => void;
  /** Ends the queue (a loop started with `open`). */
  readonly end: () => void;
  /** Batches queued, not yet taken by the loop. */
  readonly queued: () => number;
}

export interface LoopOptions {
  /** Runs before the loop starts, after the directory is set up. */
  readonly onReady?: () => void;
  /** The loop's pause between slices, given how many takes there were. */
  readonly pause?: (takes: number) => Promise<void>;
  readonly sliceBytes?: number;
  /** Leaves the queue open, for the test to push more and end it. */
  readonly open?: boolean;
}

/**
 * The writer thread's loop in this thread, on `fs`: `batches` are queued up
 * front (as a busy sink's thread hands them over) and the queue ended
 * (unless `open`), over a directory a sink opened and closed (its manifest
 * begun). At most three batches make a segment.
 */
export async function startLoop(
  fs: SegmentFs,
  dir: string,
  batches: readonly SourceBatch[],
  options: LoopOptions = {},
): Promise<Loop> {
  const { pause, sliceBytes } = options;
  const sink = await openSink(dir, { fs });
  await sink.close();
  options.onReady?.();
  const packer = new BatchPacker(CLUSTER, new BufferPool(64 * 1024 * 1024));
  const queue = new SubmitQueue<{ packed: PackedBatch; bytes: number }>({
    maxItems: Number.MAX_SAFE_INTEGER,
    maxBytes: Number.POSITIVE_INFINITY,
  });
  const sent = [...batches];
  const push = (b: SourceBatch) => {
    const packed = packer.pack(b).batch;
    void queue.push({ packed, bytes: packed.bytes });
  };
  batches.forEach(push);
  if (options.open !== true) queue.end();
  const messages: FromWorker[] = [];
  let takes = 0;
  const done = runSegmentLoop({
    fs,
    dir,
    cluster: CLUSTER,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    maxSegmentBytes: 64 * 1024 * 1024,
    maxBatchesPerSegment: 3,
    nextSequence: 0,
    checksums: true,
    take: async (items, bytes) => {
      takes++;
      return (await queue.take(items, bytes))?.map((q) => q.packed) ?? null;
    },
    post: (message) => messages.push(message),
    ...(pause === undefined ? {} : { pause: () => pause(takes) }),
    ...(sliceBytes === undefined ? {} : { sliceBytes }),
  });
  const durable = (): OffsetSpan[] => {
    const spans: OffsetSpan[] = [];
    for (const m of messages) {
      if (m.type !== 'durable') continue;
      spans.push(...sent.slice(spans.length, spans.length + m.batches).map((b) => b.span));
    }
    return spans;
  };
  return {
    done,
    messages,
    takes: () => takes,
    durable,
    push: (b) => {
      sent.push(b);
      push(b);
    },
    end: () => queue.end(),
    queued: () => queue.size.items,
  };
}

/**
 * Waits until `condition` holds. The loop's file operations run on libuv's
 * pool (another thread), so this asks on a short clock, with a deadline.
 */
export function until(condition: () => boolean, what: string): Promise<void> {
  return waitFor(condition, what, { everyMs: 1 });
}

/** From now on: the log and the counts start empty, and file fsyncs wait for the release returned. */
export function held(fs: FaultyFs): () => void {
  fs.log.length = 0;
  fs.calls.clear();
  return fs.hold('sync');
}

export const kinds = (messages: readonly FromWorker[]) =>
  messages.filter((m) => m.type !== 'recycle').map((m) => `${m.type} ${'file' in m ? m.file : ''}`);
