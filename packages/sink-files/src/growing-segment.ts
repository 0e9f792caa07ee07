import { EarlyAttempt } from './early-attempt.js';
import type { PackedBatch } from './packed-batch.js';
import { envelopeData } from './raw-envelope.js';
import { SegmentEncoder, type SegmentChunks } from './segment-encoder.js';
import type { SegmentFs } from './segment-fs.js';
import { segmentName } from './segment-name.js';

/** About a millisecond of encoding and checksumming, between two pauses. */
export const SLICE_BYTES = 1024 * 1024;

/** What a growing segment needs of the writer thread. */
export interface GrowingSegmentDeps {
  readonly fs: SegmentFs;
  readonly dir: string;
  readonly cluster: string;
  readonly checksums: boolean;
  readonly maxSegmentBytes: number;
  readonly maxBatchesPerSegment: number;
  /** Runs after each slice is written; lets the thread's other work through. */
  readonly pause: () => Promise<void>;
  /** Bytes encoded between two pauses. */
  readonly sliceBytes: number;
}

/**
 * A segment encoded batch by batch as its batches arrive (ADR 0053): the
 * writer thread adds each batch the moment it takes it, and every slice of
 * about `sliceBytes` encoded is written to the segment's temp file
 * (`EarlyAttempt`, created with the first slice) before the thread pauses,
 * so the previous segment's commit issues its next step meanwhile. `finish`
 * adds the footer; the commit then writes what is not in the file yet.
 *
 * The bytes are those of `packedSegmentChunks` over the same batches, in the
 * same order. Nothing here is durable or visible: see early-attempt.ts.
 */
export class GrowingSegment {
  readonly name: string;
  /** The batches added, in order; their buffers are viewed until the segment is written. */
  readonly batches: PackedBatch[] = [];
  private readonly encoder: SegmentEncoder;
  private early: EarlyAttempt | null = null;
  /** The batches' packed bytes (what the segment bound counts). */
  private packedBytes = 0;
  private sliceEnd: number;

  constructor(
    private readonly d: GrowingSegmentDeps,
    readonly sequence: number,
  ) {
    this.name = segmentName(sequence);
    this.encoder = new SegmentEncoder(d.cluster, d.checksums);
    this.sliceEnd = d.sliceBytes;
  }

  get empty(): boolean {
    return this.batches.length === 0;
  }

  /** At its bounds: no batch may be added. */
  get full(): boolean {
    return (
      this.batches.length >= this.d.maxBatchesPerSegment ||
      this.packedBytes >= this.d.maxSegmentBytes
    );
  }

  /** Whether `batch` may be added: an empty segment takes any one batch, however large. */
  fits(batch: PackedBatch): boolean {
    return (
      this.empty ||
      (this.batches.length < this.d.maxBatchesPerSegment &&
        this.packedBytes + batch.bytes <= this.d.maxSegmentBytes)
    );
  }

  /** Encodes `batch` after those added before it; at a slice's end, writes and pauses. */
  async add(batch: PackedBatch): Promise<void> {
    this.encoder.add(batch.span, envelopeData(batch));
    this.batches.push(batch);
    this.packedBytes += batch.bytes;
    if (this.encoder.bytes < this.sliceEnd) return;
    this.early ??= await EarlyAttempt.begin(this.d.fs, this.d.dir, this.sequence);
    await this.early.write(this.encoder.chunks);
    await this.d.pause();
    this.sliceEnd = this.encoder.bytes + this.d.sliceBytes;
  }

  /**
   * The whole segment, footer included, and its early attempt (none when
   * no slice was written). No batch may be added after.
   */
  finish(): { readonly segment: SegmentChunks; readonly early: EarlyAttempt | undefined } {
    return { segment: this.encoder.finish(), early: this.early ?? undefined };
  }

  /** The segment will not be committed: its temp file, if begun, is closed and removed. */
  async abandon(): Promise<void> {
    await this.early?.abandon();
    this.early = null;
  }
}
