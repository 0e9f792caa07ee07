import {
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { backoffDelay, sleep, type RetryPolicy } from '@thalweg/connector-core';
import { CoverageError } from '../errors.js';

/**
 * Attempts of one read-merge-write before it gives up with
 * TWG_COVERAGE_CONTENTION, and the full-jitter backoff between them:
 * connector-core's one retry policy.
 */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 12, baseDelayMs: 10, maxDelayMs: 1000 };

/**
 * Read-modify-write of one object under S3 conditional writes: create with
 * `If-None-Match: *`, replace with `If-Match: <etag>`. A 412 (or 409, which
 * S3 answers to racing conditional writes) means another writer got there
 * first: re-read, re-apply `update` to what it wrote, try again after a
 * jittered backoff. Because `update` is a union, retrying converges and
 * never drops the other writer's ranges. Returns the number of attempts.
 *
 * `update` returns null when the object already holds everything: nothing
 * is written then.
 */
export async function updateObject(
  s3: S3Client,
  bucket: string,
  key: string,
  update: (current: string | null) => string | null,
  retry: RetryPolicy,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const current = await getObject(s3, bucket, key);
    const next = update(current?.body ?? null);
    if (next === null) return attempt;
    try {
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: next,
          ContentType: 'application/json',
          ...(current === null ? { IfNoneMatch: '*' } : { IfMatch: current.etag }),
        }),
      );
      return attempt;
    } catch (e) {
      if (!isConflict(e)) throw backendError(`writing s3://${bucket}/${key}`, e);
      if (attempt >= retry.maxAttempts) {
        throw new CoverageError(
          'TWG_COVERAGE_CONTENTION',
          `s3://${bucket}/${key}: ${attempt} conditional writes lost to concurrent writers; nothing of this call was written to it`,
          e,
        );
      }
      await sleep(backoffDelay(retry, attempt));
    }
  }
}

export async function getObject(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<{ body: string; etag: string } | null> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const body = (await out.Body?.transformToString('utf8')) ?? '';
    if (out.ETag === undefined) throw new Error('the response carries no ETag');
    return { body, etag: out.ETag };
  } catch (e) {
    if (e instanceof NoSuchKey) return null;
    if (e instanceof S3ServiceException && e.$metadata.httpStatusCode === 404) return null;
    throw backendError(`reading s3://${bucket}/${key}`, e);
  }
}

function isConflict(e: unknown): boolean {
  if (!(e instanceof S3ServiceException)) return false;
  const status = e.$metadata.httpStatusCode;
  return status === 412 || status === 409;
}

function backendError(what: string, cause: unknown): CoverageError {
  return cause instanceof CoverageError
    ? cause
    : new CoverageError('TWG_COVERAGE_BACKEND', `${what} failed`, cause);
}
