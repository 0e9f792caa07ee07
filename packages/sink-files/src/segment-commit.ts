import { join } from 'node:path';
import { writeSegmentDurably, type DurableWriteDeps } from './durable-write.js';
import type { EarlyAttempt } from './early-attempt.js';
import { RawSinkError, reasonOf } from './errors.js';
import type { ManifestAppender, ManifestBatch } from './raw-manifest.js';
import type { SegmentChunks } from './segment-codec.js';

/**
 * Commits one segment, the same on either writer's thread: the durable write
 * (durable-write.ts: temp file, fsync, close, rename, directory fsync, whole
 * retries), then its manifest line, appended and fsynced. Only then may
 * anything it holds be confirmed: a confirmation that rests on a segment the
 * manifest does not list would be lost to the next open, which deletes such
 * a file as never acknowledged.
 *
 * A failed manifest append is not retried (an unknown partial write lies
 * at the end of the file): it ends the writer, and the next open cuts the
 * torn line and deletes the unlisted segment; nothing of it was confirmed.
 */
export async function commitSegment(
  deps: DurableWriteDeps,
  manifest: ManifestAppender,
  sequence: number,
  name: string,
  segment: SegmentChunks,
  batches: readonly ManifestBatch[],
  early?: EarlyAttempt,
): Promise<void> {
  await writeSegmentDurably(deps, sequence, name, segment.chunks, early);
  try {
    await manifest.append({ sequence, file: name, layout: segment.layout, batches });
  } catch (error) {
    throw new RawSinkError(
      'TWG_RAW_WRITE_FAILED',
      `is durable but its manifest line could not be: ${reasonOf(error)}; nothing it holds ` +
        'is confirmed, and the next open discards it',
      { file: join(deps.dir, name) },
      error,
    );
  }
}
