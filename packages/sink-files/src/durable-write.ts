import { join } from 'node:path';
import { retrying, type RetryPolicy } from '@thalweg/connector-core';
import { diskFullCode, RawSinkError, reasonOf } from './errors.js';
import type { EarlyAttempt } from './early-attempt.js';
import type { SegmentFs } from './segment-fs.js';
import { tempName } from './segment-name.js';

export interface DurableWriteDeps {
  readonly fs: SegmentFs;
  readonly dir: string;
  readonly retry: RetryPolicy;
  /** A failed attempt that will be retried. */
  readonly onRetry: (file: string, attempt: number, error: unknown) => void;
}

/**
 * Makes `segment` the durable segment `name` (flush-close): write a temp file,
 * fsync it, close it, rename it into place, fsync the directory. With
 * `early`, attempt 1's temp file was created, and written in part, while the
 * segment was encoded: the attempt writes the chunks still missing. Only when
 * all five succeeded is the segment durable; the caller confirms nothing
 * before this resolves.
 *
 * Any failure retries the whole sequence under a new temp name, after
 * removing the old temp file: a failed fsync leaves the page cache in an
 * unknown state (fsyncgate), so the bytes are written again rather than the
 * fsync repeated. A rename that landed before the directory fsync failed is
 * simply replaced by the next attempt's identical file. After the last
 * attempt the error names the segment file and the cause.
 *
 * A full disk (ENOSPC, or EDQUOT for a quota) is not retried: each attempt
 * would write the whole segment again until the disk is full again, taking
 * the space other processes on that disk are waiting for, and the attempts
 * are over in about a second, long before anyone frees space. The error says
 * the disk is full and names the file being written; nothing of the segment
 * was confirmed, so its batches are replayed once space is freed and the
 * sink reopened.
 */
export async function writeSegmentDurably(
  deps: DurableWriteDeps,
  sequence: number,
  name: string,
  segment: readonly Uint8Array[],
  early?: EarlyAttempt,
): Promise<void> {
  const { fs, dir, retry } = deps;
  const target = join(dir, name);
  let attempts = 0;
  try {
    await retrying(
      retry,
      async (attempt) => {
        attempts = attempt;
        const temp = join(dir, tempName(sequence, attempt));
        try {
          // Attempt 1 may have begun while the segment was encoded (early-attempt.ts).
          const begun = attempt === 1 && early !== undefined ? early.take() : null;
          const file = begun?.file ?? (await fs.create(temp));
          try {
            await file.write(begun === null ? segment : segment.slice(begun.written));
            await file.sync();
          } catch (error) {
            await file.close().catch(() => undefined); // the write's error is the one to report
            throw error;
          }
          await file.close();
          await fs.rename(temp, target);
          await fs.syncDir(dir);
        } catch (error) {
          // Best effort: a temp file left behind is deleted on the next open.
          await fs.remove(temp).catch(() => undefined);
          throw error;
        }
      },
      {
        transient: (error) => diskFullCode(error) === null,
        onRetry: (error, attempt) => deps.onRetry(target, attempt, error),
      },
    );
  } catch (error) {
    const full = diskFullCode(error);
    if (full !== null) {
      const temp = join(dir, tempName(sequence, attempts));
      throw new RawSinkError(
        'TWG_RAW_WRITE_FAILED',
        `the disk is full (${full}) writing ${temp}: free space on the file system of ${dir}, ` +
          'then reopen the sink; nothing of this segment was confirmed, so its batches replay ' +
          `(not retried: every attempt would fill the disk again) [${reasonOf(error)}]`,
        { file: target },
        error,
      );
    }
    throw new RawSinkError(
      'TWG_RAW_WRITE_FAILED',
      `could not be made durable after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reasonOf(error)}`,
      { file: target },
      error,
    );
  }
}
