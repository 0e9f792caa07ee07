import { Worker } from 'node:worker_threads';
import type { Confirm, SourceBatch } from '@thalweg/connector-core';
import { AckLane, type Accepted, type LaneCounts } from './ack-lane.js';
import { BatchPacker } from './batch-packer.js';
import { BufferPool } from './buffer-pool.js';
import { RawSinkError, reasonOf } from './errors.js';
import { InflightWindow } from './inflight-window.js';
import { pooledBytes, type ResolvedOptions } from './options.js';
import type { PackedBatch } from './packed-batch.js';
import type { SegmentIndex } from './segment-index.js';
import { segmentWorkerEntry, segmentWorkerEntryExists } from './segment-worker-entry.js';
import type { SegmentWriter } from './segment-writer.js';
import {
  WORKER_PROTOCOL,
  type FromWorker,
  type ToWorker,
  type WorkerInit,
} from './worker-protocol.js';

/**
 * `writer: 'worker'` (the default): the submitting thread only checks and
 * packs each batch (batch-packer.ts) and transfers its one buffer to a
 * writer thread (segment-worker.ts), which builds the envelopes, encodes
 * the segments, group-commits and makes them durable. The work that scales
 * with the bytes (encoding, copying into the segment, the write) leaves
 * the thread the source and the pipeline run on.
 *
 * The guarantees are the inline writer's:
 * - A batch counts against `maxQueuedBatches`/`maxQueuedBytes` from
 *   admission until the worker reports its segment durable; a full window
 *   makes `submit` wait, and admission is in call order.
 * - Batches reach the worker in admission order, the worker writes them in
 *   that order, and reports each durable segment with how many of the
 *   oldest outstanding batches it holds. Only then does this thread index
 *   the segment and apply the confirmations, in order (the ack lane).
 * - A write that fails through its retries, a thread that throws or exits
 *   on its own, fails the sink: flush, close and submit reject with an
 *   error naming the segment file or the exit, and what the thread held is
 *   never confirmed.
 *
 * The thread is unref'd while it holds nothing, so an idle sink does not
 * keep the process alive; while batches are outstanding it is ref'd, as a
 * pending file write would be.
 */
export class WorkerWriter implements SegmentWriter {
  private readonly ack: AckLane;
  private readonly window: InflightWindow;
  private readonly packer: BatchPacker;
  private readonly pool: BufferPool;
  /** Batches handed to the worker and not yet reported durable, oldest first. */
  private outstanding: Accepted[] = [];
  /** Durable reports and the failure, applied one after another. */
  private acking: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private ending = false;
  private alive = true;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly o: ResolvedOptions,
    index: SegmentIndex,
    private readonly worker: Worker,
  ) {
    this.ack = new AckLane(o, index);
    this.window = new InflightWindow(o.maxQueuedBatches, o.maxQueuedBytes);
    this.pool = new BufferPool(pooledBytes(o));
    this.packer = new BatchPacker(o.cluster, this.pool);
    worker.on('message', (message: FromWorker) => this.receive(message));
    worker.on('error', (error) =>
      this.fail(
        new RawSinkError(
          'TWG_RAW_WRITE_FAILED',
          `the segment writer thread for ${o.dir} threw: ${reasonOf(error)}; ` +
            `${this.outstanding.length} batches it held were not made durable and are not confirmed`,
          {},
          error,
        ),
      ),
    );
    worker.on('messageerror', (error) =>
      this.fail(
        new RawSinkError(
          'TWG_RAW_WRITE_FAILED',
          `a message from the segment writer thread could not be read: ${reasonOf(error)}`,
          {},
          error,
        ),
      ),
    );
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        this.alive = false;
        if (!this.ending || this.outstanding.length > 0) {
          this.fail(
            new RawSinkError(
              'TWG_RAW_WRITE_FAILED',
              `the segment writer thread for ${o.dir} exited with code ${code}; ` +
                `${this.outstanding.length} batches it held were not made durable and are not confirmed`,
            ),
          );
        }
        resolve();
      }),
    );
    worker.unref();
  }

  /**
   * Starts the writer thread and waits until it runs. A missing compiled
   * entry, a thread that fails to load, or one of another build is
   * refused here, at open, with TWG_RAW_WRITER_UNAVAILABLE.
   */
  static async start(
    o: ResolvedOptions,
    index: SegmentIndex,
    nextSequence: number,
    checksums = true,
  ): Promise<WorkerWriter> {
    const entry = segmentWorkerEntry();
    if (!segmentWorkerEntryExists(entry)) {
      throw new RawSinkError(
        'TWG_RAW_WRITER_UNAVAILABLE',
        `the writer thread's entry ${entry.pathname} does not exist: build the package ` +
          "(tsc -b) or open the sink with writer: 'inline'",
      );
    }
    const init: WorkerInit = {
      protocol: WORKER_PROTOCOL,
      dir: o.dir,
      cluster: o.cluster,
      retry: o.retry,
      maxSegmentBytes: o.maxSegmentBytes,
      maxBatchesPerSegment: o.maxBatchesPerSegment,
      nextSequence,
      checksums,
    };
    let worker: Worker | null = null;
    try {
      worker = new Worker(entry, {
        workerData: init,
        // No inherited flags: the writer's code needs none, and a parent's
        // can stop the thread (`--input-type` of `node -e`; flags refused in
        // a worker) or resolve its imports to other files (`--conditions`).
        execArgv: [],
      });
      await ready(worker);
    } catch (cause) {
      await worker?.terminate();
      throw new RawSinkError(
        'TWG_RAW_WRITER_UNAVAILABLE',
        `the writer thread ${entry.pathname} did not start: ${reasonOf(cause)}`,
        {},
        cause,
      );
    }
    return new WorkerWriter(o, index, worker);
  }

  async submit(batch: SourceBatch, confirm: Confirm<'primary-raw'>): Promise<void> {
    const { batch: packed, payloadBytes } = this.packer.pack(batch);
    const accepted: Accepted = {
      span: packed.span,
      confirm,
      records: packed.count,
      bytes: packed.bytes,
      payloadBytes,
      submittedAt: Date.now(),
    };
    await this.window.enter(accepted.bytes, () => this.send(packed, accepted));
  }

  flush(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return this.ack.flush(this.window.admitted);
  }

  async end(): Promise<void> {
    if (this.failure === null) {
      this.ending = true;
      // Held until the thread exits, so an awaited close keeps the process alive.
      this.worker.ref();
      this.post({ type: 'end' });
    } else {
      await this.worker.terminate();
    }
    await this.exited;
    await this.acking;
  }

  get failed(): Error | null {
    return this.failure;
  }

  get queued(): { readonly items: number; readonly bytes: number } {
    return this.window.size;
  }

  get counts(): LaneCounts {
    return this.ack.counts;
  }

  /** Whether the writer thread still runs. */
  get running(): boolean {
    return this.alive;
  }

  /** Tests only: makes the writer thread exit as if it crashed (after what was sent before). */
  exitForTest(code: number): void {
    this.post({ type: 'test-exit', code });
  }

  /** Admission (in order): hand the batch to the thread, transferring its buffer. */
  private send(packed: PackedBatch, accepted: Accepted): void {
    this.post({ type: 'batch', batch: packed }, [packed.buffer]);
    if (this.outstanding.length === 0) this.worker.ref();
    this.outstanding.push(accepted);
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case 'durable': {
        if (message.batches < 1 || message.batches > this.outstanding.length) {
          this.fail(
            new RawSinkError(
              'TWG_RAW_WRITE_FAILED',
              `the writer thread reported ${message.batches} batches durable in ${message.file} ` +
                `while ${this.outstanding.length} were outstanding`,
            ),
          );
          return;
        }
        const burst = this.outstanding.splice(0, message.batches);
        let bytes = 0;
        for (const a of burst) bytes += a.bytes;
        if (this.outstanding.length === 0 && !this.ending) this.worker.unref();
        this.window.leave(burst.length, bytes);
        this.acking = this.acking
          .then(() => this.ack.durable(message.file, message.sequence, message.layout, burst))
          .catch((error: unknown) => {
            // A bug here must fail the sink loudly, not leave flushes hanging.
            this.fail(
              new RawSinkError(
                'TWG_RAW_WRITE_FAILED',
                `confirming ${message.file} failed: ${reasonOf(error)}`,
                {},
                error,
              ),
            );
          });
        return;
      }
      case 'recycle':
        for (const buffer of message.buffers) this.pool.give(buffer);
        return;
      case 'retry':
        this.ack.retried(message.file, message.attempt, new Error(message.error));
        return;
      case 'failed':
        this.fail(
          new RawSinkError(
            'TWG_RAW_WRITE_FAILED',
            message.reason,
            { file: message.file },
            new Error(message.cause),
          ),
        );
        return;
      case 'ready':
        return;
    }
  }

  /**
   * The first failure stands: submits are refused and waiting ones rejected
   * at once, the thread is stopped, and what it held is dropped unconfirmed.
   * Segments it reported durable before the failure are still confirmed (in
   * order, ahead of the failure) because they are durable.
   */
  private fail(error: RawSinkError): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.window.fail(error);
    this.outstanding = [];
    void this.worker.terminate();
    this.acking = this.acking.then(() => this.ack.fail(error));
  }
}

/** Resolves on the thread's first message if it is a ready of this protocol; rejects otherwise. */
function ready(worker: Worker): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (message: FromWorker) => {
      settle();
      if (message.type === 'ready' && message.protocol === WORKER_PROTOCOL) resolve();
      else {
        reject(
          new Error(
            `it speaks ${JSON.stringify(message)}, not protocol ${WORKER_PROTOCOL} ` +
              '(a stale build: run tsc -b)',
          ),
        );
      }
    };
    const onError = (error: Error) => {
      settle();
      reject(error);
    };
    const onExit = (code: number) => {
      settle();
      reject(new Error(`it exited with code ${code} before it was ready`));
    };
    const settle = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}
