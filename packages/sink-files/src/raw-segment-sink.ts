import { join } from 'node:path';
import {
  ConfigError,
  offsetSpan,
  type Confirm,
  type DeliveryPressure,
  type LaneMetrics,
  type OffsetSpan,
  type PrimaryRawDescriptor,
  type ReplayableSink,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import { checkSubmission } from './batch-check.js';
import { DirLock } from './dir-lock.js';
import { RawSinkError } from './errors.js';
import { InlineWriter } from './inline-writer.js';
import {
  describeOptions,
  resolveOptions,
  type RawSegmentSinkOptions,
  type ResolvedOptions,
} from './options.js';
import { MANIFEST_FILE, ManifestAppender } from './raw-manifest.js';
import { ARROW_IPC_SEGMENTS, type SegmentFormat } from './segment-format.js';
import type { SegmentIndex } from './segment-index.js';
import { scanSegments } from './segment-scan.js';
import type { SegmentWriter } from './segment-writer.js';
import { readSpan } from './span-reader.js';
import { WorkerWriter } from './worker-writer.js';
import { registerWriter } from './writer-handle.js';

/** What the writer has done since open. */
export interface RawSinkStats {
  /** Segments made durable since open. */
  readonly segmentsWritten: number;
  /**
   * Group commits: what the writer took from the queue at once, made durable
   * as one segment. Equal to `segmentsWritten` (a burst larger than the
   * segment bounds is taken as several bursts); named for the coalesce ratio.
   */
  readonly bursts: number;
  readonly bytesWritten: number;
  readonly batchesWritten: number;
  readonly recordsWritten: number;
  /** Batches per segment on average: > 1 means submissions were group-committed. */
  readonly coalesce: number;
  /** The most batches one burst (one segment) held. */
  readonly maxBatchesPerBurst: number;
  readonly writeRetries: number;
  readonly confirmFailures: number;
  /** Segments in the index: those found on open plus those written. */
  readonly segmentsIndexed: number;
  /** Accepted, not yet durable (worker) or not yet taken by the writer (inline). */
  readonly queuedBatches: number;
  /** Bytes of those batches as packed. */
  readonly queuedBytes: number;
}

/** A durable segment and the batches it holds, for audits and tests. */
export interface SegmentSummary {
  readonly file: string;
  readonly bytes: number;
  readonly batches: readonly { readonly span: OffsetSpan; readonly records: number }[];
}

/** A partition and the merged offset runs raw durably holds for it. */
export interface PartitionCoverage {
  readonly partition: SourcePartition;
  readonly spans: readonly OffsetSpan[];
}

/**
 * The primary-raw sink on local disk: every source batch, exactly as
 * delivered, in Arrow IPC segment files made durable by write, fsync, close,
 * rename and directory fsync (flush-close) before anything is confirmed.
 *
 * `submit` checks and packs the batch, queues it and returns: accepted, not
 * durable. One writer takes everything queued (up to the segment bounds)
 * into one segment and makes it durable; only then does the ack lane apply
 * the confirmations, one by one in submission order. That group commit is
 * what makes fsync-per-segment affordable: under load, one fsync confirms
 * many batches. The writer runs on a worker thread by default
 * (worker-writer.ts), so the submitting thread only checks and packs.
 */
export class RawSegmentSink implements ReplayableSink<SourceBatch> {
  readonly descriptor: PrimaryRawDescriptor;
  private closed = false;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly options: ResolvedOptions,
    private readonly index: SegmentIndex,
    private readonly writer: SegmentWriter,
    private readonly lock: DirLock,
    private readonly format: SegmentFormat,
  ) {
    this.descriptor = {
      id: options.id,
      kind: format.kind,
      durability: { kind: 'flush-close' },
      recovery: { kind: 'readable' },
    };
    registerWriter(this, writer);
  }

  /** The cluster every segment records: record ids of what raw holds hash it. */
  get cluster(): string {
    return this.options.cluster;
  }

  /**
   * Validates the options (a ConfigError names the field), logs every
   * setting, then reads the directory's manifest (segment-scan.ts): every
   * segment it lists is indexed without being read, a listed segment that is
   * missing or truncated fails the open naming the offset range it held, and
   * crash leftovers (never confirmed) are deleted. Then starts the writer; in worker mode, open resolves
   * once the writer thread runs.
   *
   * The directory has one live writer (dir-lock.ts): a second open, in this
   * process or another, is refused with TWG_RAW_DIR_LOCKED naming the
   * holder, until the first is closed or its process is gone.
   *
   * `format` is how each file holds its batches (segment-format.ts): Arrow
   * IPC segments by default. Another format is encoded on the calling
   * thread, so it needs `writer: 'inline'`.
   */
  static async open(
    options: RawSegmentSinkOptions,
    tuning: {
      /** Benchmarks only: `checksums: false` is the unchecked baseline, whose segments fail every read. */
      readonly checksums?: boolean;
      readonly format?: SegmentFormat;
    } = {},
  ): Promise<RawSegmentSink> {
    const checksums = tuning.checksums ?? true;
    const format = tuning.format ?? ARROW_IPC_SEGMENTS;
    const o = resolveOptions(options);
    if (format !== ARROW_IPC_SEGMENTS && o.writer === 'worker') {
      throw new ConfigError(
        'writer',
        `the ${format.kind} format is encoded on the calling thread: it needs writer: 'inline' ` +
          '(the worker thread writes Arrow IPC segments only)',
      );
    }
    for (const line of describeOptions(o)) o.log(`thalweg sink-files ${o.id}: ${line}`);
    await o.fs.ensureDir(o.dir);
    const lock = await DirLock.acquire(o.dir, 'raw segment sink');
    // Until a writer owns it, the inline manifest is this function's to close.
    let manifest: ManifestAppender | null = null;
    try {
      const { index, nextSequence } = await scanSegments(o);
      let writer: SegmentWriter;
      if (o.writer === 'worker') {
        writer = await WorkerWriter.start(o, index, nextSequence, checksums);
      } else {
        manifest = await ManifestAppender.open(o.fs, join(o.dir, MANIFEST_FILE));
        writer = new InlineWriter(o, index, nextSequence, manifest, format, checksums);
        manifest = null;
      }
      return new RawSegmentSink(o, index, writer, lock, format);
    } catch (error) {
      await manifest?.close().catch(() => undefined);
      await lock.release();
      throw error;
    }
  }

  /**
   * Checks the batch (span, offsets, record types; a RawSinkError names the
   * field and offset, and nothing is queued), packs it, and queues it:
   * resolves once ACCEPTED, not durable. Waits while the queue is full.
   */
  async submit(
    batch: SourceBatch,
    span: OffsetSpan,
    confirm: Confirm<'primary-raw'>,
  ): Promise<void> {
    this.refuseIfUnusable();
    checkSubmission(batch, span, confirm);
    await this.writer.submit(batch, confirm);
  }

  /** Resolves once every batch accepted before the call is confirmed; rejects once the sink failed. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /**
   * Refuses further submits at once, flushes, stops the writer, and lets the
   * directory go (its lock), also when the flush rejects. Idempotent.
   */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      try {
        await this.writer.flush();
      } finally {
        try {
          await this.writer.end();
        } finally {
          await this.lock.release();
        }
      }
    })();
    return this.closing;
  }

  /**
   * Every durable record of the span's partition in `[start, end)`, ascending,
   * each offset once, in batches of at most `readChunkRecords` records whose
   * spans tile raw's durable runs (span-reader.ts). Only segments whose
   * batches overlap the span are opened, and each is checked against the
   * checksums written with it before it is parsed: a damaged one
   * (TWG_RAW_CHECKSUM_MISMATCH, naming the file, the byte and the offsets),
   * or two copies of an offset whose content differs, fails the read.
   */
  async *read(
    span: OffsetSpan,
    signal?: AbortSignal,
  ): AsyncGenerator<SourceBatch, void, undefined> {
    const s = offsetSpan(span.topic, span.partition, span.start, span.end);
    signal?.throwIfAborted();
    yield* readSpan(s, {
      dir: this.options.dir,
      batches: this.index.overlapping(s),
      runs: this.index.runs(s, s.start, s.end),
      load: async (segment) => {
        const path = join(this.options.dir, segment.file);
        const expected = { layout: segment.layout, spans: segment.batches.map((b) => b.span) };
        return this.format.decode(await this.options.fs.readFile(path), path, expected);
      },
      chunkRecords: this.options.readChunkRecords,
      signal,
    });
  }

  /** The merged offset runs raw durably holds for `partition`, ascending. */
  durableSpans(partition: SourcePartition): OffsetSpan[] {
    return this.index.runs(partition);
  }

  /** What raw durably holds (the segments it indexed): what recovery plans against. */
  async held(): Promise<PartitionCoverage[]> {
    return this.coverage();
  }

  /** Every partition raw holds, with its durable runs. */
  coverage(): PartitionCoverage[] {
    return this.index.partitions().map((partition) => ({
      partition,
      spans: this.index.runs(partition),
    }));
  }

  /** The partitions raw holds any batch of, sorted by topic then partition. */
  partitions(): SourcePartition[] {
    return this.index.partitions();
  }

  /** The durable segments in write order, with the batches each holds. */
  segments(): SegmentSummary[] {
    return this.index.segments().map((s) => ({
      file: s.file,
      bytes: s.bytes,
      batches: s.batches.map((b) => ({ span: b.span, records: b.records })),
    }));
  }

  stats(): RawSinkStats {
    const c = this.writer.counts;
    const queued = this.writer.queued;
    return {
      ...c,
      bursts: c.segmentsWritten,
      coalesce: c.segmentsWritten === 0 ? 0 : c.batchesWritten / c.segmentsWritten,
      segmentsIndexed: this.index.segments().length,
      queuedBatches: queued.items,
      queuedBytes: queued.bytes,
    };
  }

  /**
   * The writer's queue fill and its segment writes failing in a row: the
   * pipeline's channel and write-failure signals for flow control.
   */
  pressure(): DeliveryPressure {
    return this.writer.pressure();
  }

  /** Raw's one ack lane (stream `0`), its metrics live across scrapes. */
  lanes(): readonly LaneMetrics[] {
    return this.writer.lanes();
  }

  /** The failure that ended the writer, or null while it is healthy. */
  get failed(): Error | null {
    return this.writer.failed;
  }

  private refuseIfUnusable(): void {
    const failure = this.writer.failed;
    if (failure !== null) throw failure;
    if (this.closed) {
      throw new RawSinkError(
        'TWG_RAW_CLOSED',
        `sink "${this.descriptor.id}" is closed; nothing more is accepted`,
      );
    }
  }
}
