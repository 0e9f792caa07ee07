import { join } from 'node:path';
import type { Confirm, SourceBatch } from '@thalweg/connector-core';
import { AckLane, type Accepted, type LaneCounts } from './ack-lane.js';
import { BatchPacker } from './batch-packer.js';
import { BufferPool } from './buffer-pool.js';

import { RawSinkError, reasonOf } from './errors.js';
import { pooledBytes, type ResolvedOptions } from './options.js';
import type { PackedBatch } from './packed-batch.js';
import type { ManifestAppender } from './raw-manifest.js';
import { commitSegment } from './segment-commit.js';
import { packedSegmentChunks, type SegmentChunks } from './segment-codec.js';
import type { SegmentIndex } from './segment-index.js';
import { segmentName } from './segment-name.js';
import type { SegmentWriter } from './segment-writer.js';
import { SubmitQueue } from './submit-queue.js';

interface Queued extends Accepted {
  readonly packed: PackedBatch;
}

/**
 * `writer: 'inline'`: the whole write path on the calling thread. `submit`
 * packs the batch and queues it; one background loop takes everything
 * queued (up to the segment bounds) as one burst, encodes it as one
 * segment, makes it durable through the injected `SegmentFs` (the seam the
 * fault-injection tests use), and hands it to the ack lane.
 *
 * A write that fails through its retries ends the writer: the burst and
 * everything queued behind it stay unconfirmed (the source redelivers them
 * to a reopened sink), and every waiting push and flush rejects with the
 * error.
 */
export class InlineWriter implements SegmentWriter {
  private readonly queue: SubmitQueue<Queued>;
  private readonly packer: BatchPacker;
  private readonly pool: BufferPool;
  private readonly ack: AckLane;
  private readonly done: Promise<void>;

  constructor(
    private readonly o: ResolvedOptions,
    index: SegmentIndex,
    private nextSequence: number,
    private readonly manifest: ManifestAppender,
    private readonly checksums = true,
  ) {
    this.queue = new SubmitQueue(o.maxQueuedBatches, o.maxQueuedBytes);
    this.pool = new BufferPool(pooledBytes(o));
    this.packer = new BatchPacker(o.cluster, this.pool);
    this.ack = new AckLane(o, index);
    // A bug in the loop must fail the sink loudly, not leave flushes hanging.
    this.done = this.run().catch((error: unknown) => {
      this.fail(
        new RawSinkError(
          'TWG_RAW_WRITE_FAILED',
          `the writer stopped: ${reasonOf(error)}`,
          {},
          error,
        ),
      );
    });
  }

  async submit(batch: SourceBatch, confirm: Confirm<'primary-raw'>): Promise<void> {
    const { batch: packed, payloadBytes } = this.packer.pack(batch);
    await this.queue.push({
      span: packed.span,
      confirm,
      records: packed.count,
      bytes: packed.bytes,
      payloadBytes,
      submittedAt: Date.now(),
      packed,
    });
  }

  flush(): Promise<void> {
    return this.ack.flush(this.queue.admitted);
  }

  async end(): Promise<void> {
    this.queue.end();
    await this.done;
    await this.manifest.close();
  }

  get failed(): Error | null {
    return this.ack.failed;
  }

  get queued(): { readonly items: number; readonly bytes: number } {
    return this.queue.size;
  }

  get counts(): LaneCounts {
    return this.ack.counts;
  }

  private async run(): Promise<void> {
    for (;;) {
      const burst = await this.queue.take(this.o.maxBatchesPerSegment, this.o.maxSegmentBytes);
      if (burst === null) return;
      const sequence = this.nextSequence++;
      const name = segmentName(sequence);
      let segment: SegmentChunks;
      try {
        segment = packedSegmentChunks(
          this.o.cluster,
          burst.map((q) => q.packed),
          this.checksums,
        );
        await commitSegment(
          {
            fs: this.o.fs,
            dir: this.o.dir,
            retry: this.o.retry,
            onRetry: (file, attempt, error) => this.ack.retried(file, attempt, error),
          },
          this.manifest,
          sequence,
          name,
          segment,
          burst.map((q) => ({ span: q.packed.span, records: q.packed.count })),
        );
      } catch (error) {
        this.fail(
          error instanceof RawSinkError
            ? error
            : new RawSinkError(
                'TWG_RAW_WRITE_FAILED',
                reasonOf(error),
                { file: join(this.o.dir, name) },
                error,
              ),
        );
        return;
      }
      // Written: the chunks viewing the packed buffers are done with them.
      for (const q of burst) this.pool.give(q.packed.buffer);
      await this.ack.durable(name, sequence, segment.layout, burst);
    }
  }

  private fail(error: Error): void {
    this.queue.fail(error);
    this.ack.fail(error);
  }
}
