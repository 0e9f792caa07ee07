/**
 * The writer thread of `RawSegmentSink` in `writer: 'worker'` mode (the
 * entry file of a node:worker_threads Worker, not a module to import). It
 * receives packed batches in submission order, group-commits everything
 * queued (up to the segment bounds) into one segment, encodes it (the
 * envelopes are views into the transferred buffers), makes it durable
 * exactly as the inline writer does (segment-commit.ts: temp file, fsync,
 * close, rename, directory fsync, whole-segment retries with backoff, then
 * its manifest line, fsynced), and only then reports it. It never confirms anything itself: the sink's
 * thread does, on the report. The segment is written as the IPC writer's
 * chunks, views into the batches' buffers, which go back once it is
 * written, for the next batches to be packed into.
 *
 * After a write fails through its retries it reports the failure and
 * writes nothing more; the sink terminates it.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { SubmitQueue } from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import type { PackedBatch } from './packed-batch.js';
import { MANIFEST_FILE, ManifestAppender } from './raw-manifest.js';
import { commitSegment } from './segment-commit.js';
import { packedSegmentChunks, type SegmentChunks } from './segment-codec.js';
import { nodeSegmentFs } from './segment-fs.js';
import { segmentName } from './segment-name.js';
import {
  WORKER_PROTOCOL,
  type FromWorker,
  type ToWorker,
  type WorkerInit,
} from './worker-protocol.js';

interface Queued {
  readonly packed: PackedBatch;
  readonly bytes: number;
}

const port =
  parentPort ??
  ((): never => {
    throw new Error('segment-worker.js is the writer thread of RawSegmentSink, not a module');
  })();
const init = workerData as WorkerInit;
const post = (message: FromWorker): void => port.postMessage(message);
// Unbounded here: the sink's thread sends one burst at a time (worker-writer.ts).
const queue = new SubmitQueue<Queued>({
  maxItems: Number.MAX_SAFE_INTEGER,
  maxBytes: Number.POSITIVE_INFINITY,
});

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'batch':
      void queue.push({ packed: message.batch, bytes: message.batch.bytes });
      break;
    case 'end':
      queue.end();
      break;
    case 'test-exit':
      process.exit(message.code);
  }
});
post({ type: 'ready', protocol: WORKER_PROTOCOL });

async function run(): Promise<void> {
  let sequence = init.nextSequence;
  const manifest = await ManifestAppender.open(nodeSegmentFs, join(init.dir, MANIFEST_FILE));
  for (;;) {
    const burst = await queue.take(init.maxBatchesPerSegment, init.maxSegmentBytes);
    if (burst === null) break;
    const name = segmentName(sequence);
    let segment: SegmentChunks;
    try {
      segment = packedSegmentChunks(
        init.cluster,
        burst.map((q) => q.packed),
        init.checksums,
      );
      await commitSegment(
        {
          fs: nodeSegmentFs,
          dir: init.dir,
          retry: init.retry,
          onRetry: (file, attempt, error) =>
            post({ type: 'retry', file, attempt, error: reasonOf(error) }),
        },
        manifest,
        sequence,
        name,
        segment,
        burst.map((q) => ({ span: q.packed.span, records: q.packed.count })),
      );
    } catch (error) {
      const cause = error instanceof RawSinkError ? error.cause : error;
      post({
        type: 'failed',
        file: join(init.dir, name),
        reason: error instanceof RawSinkError ? error.reason : reasonOf(error),
        cause: reasonOf(cause),
      });
      await manifest.close().catch(() => undefined);
      return;
    }
    // Written: the chunks viewing the buffers are done with them.
    const buffers = burst.map((q) => q.packed.buffer);
    port.postMessage({ type: 'recycle', buffers } satisfies FromWorker, buffers);
    post({ type: 'durable', file: name, sequence, layout: segment.layout, batches: burst.length });
    sequence++;
  }
  // Ended and drained: closing the port lets the thread exit (code 0).
  await manifest.close();
  port.close();
}

void run();
