import { join } from 'node:path';
import { reasonOf } from './errors.js';
import type { SegmentFile, SegmentFs } from './segment-fs.js';
import { tempName } from './segment-name.js';

/**
 * A segment's first attempt, begun before the segment is whole: the writer
 * thread creates the temp file with the segment's first slice and writes
 * each slice of chunks as the encoder produces it (growing-segment.ts). The copy into the page
 * cache then overlaps the encode, and the disk takes the new segment's
 * bytes while the previous segment's fsync runs, instead of sitting idle
 * until that commit ends and the whole segment is written at once.
 *
 * Nothing here is durable or visible: the file keeps its temp name until
 * `writeSegmentDurably` fsyncs, closes and renames it, after the previous
 * segment's manifest line (segment-loop.ts keeps that order), and the next
 * open deletes a temp file a crash left. A failure is held, not thrown:
 * `writeSegmentDurably` reports it as the first attempt's and retries the
 * whole segment under the next temp name, as for any failed attempt.
 */
export class EarlyAttempt {
  private file: SegmentFile | null = null;
  private failure: unknown = null;
  /** How many of the segment's chunks are in the file, in order. */
  private written = 0;

  private constructor(
    private readonly fs: SegmentFs,
    /** The temp file of attempt 1. */
    readonly path: string,
  ) {}

  /** Creates attempt 1's temp file of segment `sequence` in `dir` (a failure is held). */
  static async begin(fs: SegmentFs, dir: string, sequence: number): Promise<EarlyAttempt> {
    const early = new EarlyAttempt(fs, join(dir, tempName(sequence, 1)));
    try {
      early.file = await fs.create(early.path);
    } catch (error) {
      early.failure = error;
    }
    return early;
  }

  /**
   * Writes the chunks of `chunks` (the encoder's chunks so far) that are not
   * in the file yet. After a failure it writes nothing more.
   */
  async write(chunks: readonly Uint8Array[]): Promise<void> {
    const file = this.file;
    if (file === null || this.failure !== null || chunks.length === this.written) return;
    const from = this.written;
    this.written = chunks.length;
    try {
      await file.write(chunks.slice(from));
    } catch (error) {
      this.failure = error;
      this.file = null;
      await file.close().catch(() => undefined);
    }
  }

  /**
   * The open file and how many chunks it holds, for attempt 1 to finish;
   * throws the held failure instead (the attempt then fails and is retried).
   */
  take(): { readonly file: SegmentFile; readonly written: number } {
    const failure = this.failure;
    if (failure !== null) throw failure instanceof Error ? failure : new Error(reasonOf(failure));
    if (this.file === null) throw new Error(`${this.path} was already taken, or abandoned`);
    const taken = { file: this.file, written: this.written };
    this.file = null;
    return taken;
  }

  /** The segment will not be committed (its encode failed): closes and removes the file. */
  async abandon(): Promise<void> {
    const file = this.file;
    this.file = null;
    await file?.close().catch(() => undefined);
    await this.fs.remove(this.path).catch(() => undefined);
  }
}
