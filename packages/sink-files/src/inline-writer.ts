import { join } from 'node:path';
import type { Confirm, DeliveryPressure, LaneMetrics, SourceBatch } from '@thalweg/connector-core';
import { BatchPacker } from './batch-packer.js';
import { BufferPool } from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import { pooledBytes, type ResolvedOptions } from './options.js';
import type { ManifestAppender } from './raw-manifest.js';
import { RawLane, type Accepted, type LaneCounts } from './raw-lane.js';
import { commitSegment } from './segment-commit.js';
import type { SegmentChunks } from './segment-codec.js';
import type { SegmentFormat } from './segment-format.js';
import type { SegmentIndex } from './segment-index.js';
import { segmentFileName } from './segment-name.js';
import type { SegmentWriter } from './segment-writer.js';

/**
 * `writer: 'inline'`: the whole write path on the calling thread. `submit`
 * packs the batch and queues it on raw's ack lane; the lane takes everything
 * queued (up to the segment bounds) as one burst, and this writer's durable
 * step encodes it as one segment and makes it durable through the injected
 * `SegmentFs` (the seam the fault-injection tests use), in the sink's
 * `SegmentFormat` (Arrow IPC, or another format such as Parquet).
 *
 * A write that fails through its retries ends the writer: the burst and
 * everything queued behind it stay unconfirmed (the source redelivers them
 * to a reopened sink), and every waiting push and flush rejects with the
 * error.
 */
export class InlineWriter implements SegmentWriter {
  private readonly packer: BatchPacker;
  private readonly pool: BufferPool;
  private readonly raw: RawLane;
  private readonly done: Promise<void>;

  constructor(
    private readonly o: ResolvedOptions,
    index: SegmentIndex,
    private nextSequence: number,
    private readonly manifest: ManifestAppender,
    private readonly format: SegmentFormat,
    private readonly checksums = true,
  ) {
    this.pool = new BufferPool(pooledBytes(o));
    this.packer = new BatchPacker(o.cluster, this.pool);
    this.raw = new RawLane(o, index, 'taken');
    this.done = this.raw.lane
      .run((burst) => this.writeSegment(burst))
      .catch((error: unknown) =>
        // A write that failed, or a bug in the loop: fail the sink loudly,
        // not leave flushes hanging.
        this.raw.fail(
          error instanceof RawSinkError
            ? error
            : new RawSinkError(
                'TWG_RAW_WRITE_FAILED',
                `the writer stopped: ${reasonOf(error)}`,
                {},
                error,
              ),
        ),
      );
  }

  submit(batch: SourceBatch, confirm: Confirm<'primary-raw'>): Promise<void> {
    const { batch: packed, payloadBytes } = this.packer.pack(batch);
    return this.raw.submit(packed, payloadBytes, confirm);
  }

  flush(): Promise<void> {
    return this.raw.lane.flush();
  }

  async end(): Promise<void> {
    this.raw.lane.end();
    try {
      await this.done;
    } finally {
      await this.manifest.close();
    }
  }

  get failed(): Error | null {
    return this.raw.lane.failed;
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

  /** The durable step: one segment per burst, indexed before the lane confirms it. */
  private async writeSegment(burst: readonly Accepted[]): Promise<void> {
    const sequence = this.nextSequence++;
    const name = segmentFileName(sequence, this.format.extension);
    let segment: SegmentChunks;
    try {
      segment = this.format.encode(
        this.o.cluster,
        burst.map((q) => q.packed),
        this.checksums,
      );
      await commitSegment(
        {
          fs: this.o.fs,
          dir: this.o.dir,
          retry: this.o.retry,
          onRetry: (file, attempt, error) => this.raw.retried(file, attempt, error),
        },
        this.manifest,
        sequence,
        name,
        segment,
        burst.map((q) => ({ span: q.packed.span, records: q.packed.count })),
      );
    } catch (error) {
      const failure =
        error instanceof RawSinkError
          ? error
          : new RawSinkError(
              'TWG_RAW_WRITE_FAILED',
              reasonOf(error),
              { file: join(this.o.dir, name) },
              error,
            );
      // Reported and refusing at once; the lane then ends with it.
      void this.raw.fail(failure);
      throw failure;
    }
    // Written: the chunks viewing the packed buffers are done with them.
    for (const q of burst) this.pool.give(q.packed.buffer);
    this.raw.indexed(name, sequence, segment.layout, burst);
  }
}
