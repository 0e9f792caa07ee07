import { Worker } from 'node:worker_threads';
import type {
  BurstContext,
  Confirm,
  DeliveryPressure,
  LaneMetrics,
  SourceBatch,
} from '@thalweg/connector-core';
import { BatchPacker } from './batch-packer.js';
import { BufferPool } from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import { pooledBytes, type ResolvedOptions } from './options.js';
import { RawLane, type Accepted, type LaneCounts } from './raw-lane.js';
import type { SegmentIndex } from './segment-index.js';
import { startSegmentWorker } from './segment-worker-entry.js';
import type { SegmentWriter } from './segment-writer.js';
import { WORKER_PROTOCOL, type FromWorker, type ToWorker } from './worker-protocol.js';

type DurableReport = Extract<FromWorker, { type: 'durable' }>;

/**
 * How many segments' worth one durable step hands the thread before it
 * lets the lane start the next: the thread runs dry only between steps,
 * once per this many segments under a steady load.
 */
const SEGMENTS_PER_BURST = 8;

/**
 * `writer: 'worker'` (the default): the submitting thread only checks and
 * packs each batch (batch-packer.ts) and queues it on raw's ack lane; the
 * lane's durable step hands its burst to a writer thread (segment-worker.ts),
 * transferring the buffers, and goes on handing over what is admitted while
 * it waits for the thread's durable reports. The thread group-commits,
 * encodes one segment while the last is written, and makes each durable, so
 * the work that scales with the bytes (encoding, copying into the segment,
 * the write) leaves the thread the source and the pipeline run on.
 *
 * The guarantees are the inline writer's:
 * - A batch counts against `maxQueuedBatches`/`maxQueuedBytes` from
 *   admission until the thread reports its segment durable (the lane counts
 *   until released); a full lane makes `submit` wait, and admission is in
 *   call order.
 * - The thread writes a burst in order and reports each durable segment
 *   with how many of the burst's batches it holds. Only then does this
 *   thread index the segment and the lane apply the confirmations, in order.
 * - A write that fails through its retries, a thread that throws or exits
 *   on its own, fails the sink: flush, close and submit reject with an
 *   error naming the segment file or the exit, and what the thread held is
 *   never confirmed.
 *
 * The thread is unref'd while it holds nothing, so an idle sink does not
 * keep the process alive; while a burst is outstanding it is ref'd, as a
 * pending file write would be.
 */
export class WorkerWriter implements SegmentWriter {
  private readonly raw: RawLane;
  private readonly packer: BatchPacker;
  private readonly pool: BufferPool;
  private readonly done: Promise<void>;
  /** Batches handed to the thread and not yet reported durable. */
  private outstanding = 0;
  /** Durable reports not yet taken by the step, and the step waiting for one. */
  private readonly reports: DurableReport[] = [];
  private reportWaiter: {
    resolve: (report: DurableReport | null) => void;
    reject: (e: Error) => void;
  } | null = null;
  private failure: RawSinkError | null = null;
  private ending = false;
  /** The thread was told to end: its exit is expected once it reported all it held. */
  private endPosted = false;
  private alive = true;
  private readonly exited: Promise<void>;

  private constructor(
    o: ResolvedOptions,
    index: SegmentIndex,
    private readonly worker: Worker,
  ) {
    this.raw = new RawLane(o, index, 'released', SEGMENTS_PER_BURST);
    this.pool = new BufferPool(pooledBytes(o));
    this.packer = new BatchPacker(o.cluster, this.pool);
    worker.on('message', (message: FromWorker) => this.receive(message));
    worker.on('error', (error) =>
      this.fail(
        new RawSinkError(
          'TWG_RAW_WRITE_FAILED',
          `the segment writer thread for ${o.dir} threw: ${reasonOf(error)}; ` +
            `${this.outstanding} batches it held were not made durable and are not confirmed`,
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
        if (!this.endPosted || this.outstanding > 0) {
          this.fail(
            new RawSinkError(
              'TWG_RAW_WRITE_FAILED',
              `the segment writer thread for ${o.dir} exited with code ${code}; ` +
                `${this.outstanding} batches it held were not made durable and are not confirmed`,
            ),
          );
        }
        resolve();
      }),
    );
    worker.unref();
    this.done = this.raw.lane
      .run((burst, ctx) => this.writeSegments(burst, ctx))
      .catch((error: unknown) => {
        // A bug here must fail the sink loudly, not leave flushes hanging.
        this.fail(
          error instanceof RawSinkError
            ? error
            : new RawSinkError(
                'TWG_RAW_WRITE_FAILED',
                `confirming failed: ${reasonOf(error)}`,
                {},
                error,
              ),
        );
      });
  }

  /** Starts the writer thread (`startSegmentWorker`, which refuses a missing or stale build). */
  static async start(
    o: ResolvedOptions,
    index: SegmentIndex,
    nextSequence: number,
    checksums = true,
  ): Promise<WorkerWriter> {
    const worker = await startSegmentWorker({
      protocol: WORKER_PROTOCOL,
      dir: o.dir,
      cluster: o.cluster,
      retry: o.retry,
      maxSegmentBytes: o.maxSegmentBytes,
      maxBatchesPerSegment: o.maxBatchesPerSegment,
      nextSequence,
      checksums,
    });
    return new WorkerWriter(o, index, worker);
  }

  submit(batch: SourceBatch, confirm: Confirm<'primary-raw'>): Promise<void> {
    const { batch: packed, payloadBytes } = this.packer.pack(batch);
    // Admitted: a step waiting on the thread hands it over at once (writeSegments).
    return this.raw.submit(packed, payloadBytes, confirm).then(() => this.wakeStep(null));
  }

  flush(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return this.raw.lane.flush();
  }

  async end(): Promise<void> {
    this.ending = true;
    // Held until the thread exits, so an awaited close keeps the process alive.
    this.worker.ref();
    if (this.failure === null) {
      this.raw.lane.end();
      await this.done;
    }
    if (this.failure === null) {
      this.endPosted = true;
      this.post({ type: 'end' });
    } else {
      await this.worker.terminate();
    }
    await this.exited;
    await this.done;
  }

  get failed(): Error | null {
    return this.failure;
  }

  get queued(): { readonly items: number; readonly bytes: number } {
    return this.raw.lane.size;
  }

  get counts(): LaneCounts {
    return this.raw.counts;
  }

  pressure(): DeliveryPressure {
    return this.raw.pressure();
  }

  lanes(): readonly LaneMetrics[] {
    return this.raw.lanes();
  }

  /** Whether the writer thread still runs. */
  get running(): boolean {
    return this.alive;
  }

  /** Tests only: makes the writer thread exit as if it crashed (after what was sent before). */
  exitForTest(code: number): void {
    this.post({ type: 'test-exit', code });
  }

  /**
   * The durable step: hands the burst to the thread (transferring each
   * buffer), then indexes and settles each segment the thread reports, in
   * order, until every batch it handed over is durable. While it waits it
   * takes what was submitted since (`ctx.more`, up to SEGMENTS_PER_BURST
   * segments' worth) and hands that over too, so the thread always has the
   * next segment to encode while the last is written (segment-loop.ts). It
   * hands over only what the burst holds, so no report spans two steps.
   */
  private async writeSegments(
    burst: readonly Accepted[],
    ctx: BurstContext<number, Accepted>,
  ): Promise<void> {
    const handed: Accepted[] = [];
    const handOver = (entries: readonly Accepted[]): void => {
      if (entries.length > 0 && this.outstanding === 0) this.worker.ref();
      for (const a of entries) {
        this.post({ type: 'batch', batch: a.packed }, [a.packed.buffer]);
        handed.push(a);
        this.outstanding++;
      }
    };
    handOver(burst);
    let done = 0;
    while (done < handed.length) {
      const report = await this.nextReport();
      if (report !== null) {
        const part = handed.slice(done, done + report.batches);
        if (report.batches < 1 || part.length < report.batches) {
          throw this.fail(
            new RawSinkError(
              'TWG_RAW_WRITE_FAILED',
              `the writer thread reported ${report.batches} batches durable in ${report.file} ` +
                `while ${handed.length - done} were outstanding`,
            ),
          );
        }
        done += part.length;
        this.outstanding -= part.length;
        if (this.outstanding === 0 && !this.ending) this.worker.unref();
        this.raw.indexed(report.file, report.sequence, report.layout, part);
        const at = Date.now();
        await ctx.settle(part.map((entry) => ({ entry, at })));
      }
      handOver(ctx.more());
    }
  }

  /** The next durable report, or null when a submit was admitted meanwhile (`more` may have it). */
  private nextReport(): Promise<DurableReport | null> {
    return new Promise<DurableReport | null>((resolve, reject) => {
      const report = this.reports.shift();
      if (report !== undefined) resolve(report);
      else if (this.failure !== null) reject(this.failure);
      else this.reportWaiter = { resolve, reject };
    });
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case 'durable':
        this.wakeStep(message);
        return;
      case 'recycle':
        for (const buffer of message.buffers) this.pool.give(buffer);
        return;
      case 'retry':
        this.raw.retried(message.file, message.attempt, new Error(message.error));
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

  /** Hands the waiting step the report that arrived, or null for a batch admitted meanwhile. */
  private wakeStep(report: DurableReport | null): void {
    const waiter = this.reportWaiter;
    this.reportWaiter = null;
    if (waiter !== null) waiter.resolve(report);
    else if (report !== null) this.reports.push(report);
  }

  /**
   * The first failure stands: submits are refused and waiting ones rejected
   * at once, the thread is stopped, and what it held is dropped unconfirmed.
   * Segments it reported durable before the failure are still confirmed (in
   * order, ahead of the failure) because they are durable.
   */
  private fail(error: RawSinkError): RawSinkError {
    if (this.failure !== null) return this.failure;
    this.failure = error;
    void this.raw.fail(error);
    void this.worker.terminate();
    const waiter = this.reportWaiter;
    this.reportWaiter = null;
    waiter?.reject(error);
    return error;
  }
}
