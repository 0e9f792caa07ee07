/**
 * The writer thread of `RawSegmentSink` in `writer: 'worker'` mode (the
 * entry file of a node:worker_threads Worker, not a module to import). It
 * receives packed batches in submission order and runs `runSegmentLoop`
 * (segment-loop.ts) on them: what arrives while a segment is made durable
 * becomes the next segment (up to the segment bounds), encoded as it
 * arrives (the envelopes are views into the transferred buffers); each
 * segment is made durable exactly as the inline writer does (segment-commit.ts:
 * temp file, fsync, close, rename, directory fsync, whole-segment retries
 * with backoff, then its manifest line, fsynced), and only then reports it.
 * It never confirms anything itself: the sink's thread does, on the report.
 * The segment is written as the IPC writer's chunks, views into the
 * batches' buffers, which go back once it is written, for the next batches
 * to be packed into.
 *
 * After a write fails through its retries it reports the failure and
 * writes nothing more; the sink terminates it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SubmitQueue } from '@thalweg/connector-core';
import type { PackedBatch } from './packed-batch.js';
import { nodeSegmentFs } from './segment-fs.js';
import { runSegmentLoop } from './segment-loop.js';
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
// Unbounded here: the sink's thread holds what it sends within its lane's bounds (worker-writer.ts).
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
port.postMessage({ type: 'ready', protocol: WORKER_PROTOCOL } satisfies FromWorker);

void runSegmentLoop({
  ...init,
  fs: nodeSegmentFs,
  take: async (maxItems, maxBytes) =>
    (await queue.take(maxItems, maxBytes))?.map((q) => q.packed) ?? null,
  post: (message) =>
    port.postMessage(message, message.type === 'recycle' ? [...message.buffers] : []),
}).then((end) => {
  // Ended and drained: closing the port lets the thread exit (code 0). A
  // failed loop waits to be terminated by the sink, which read its report.
  if (end === 'ended') port.close();
});
