import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { BackupStore } from './backup-store.js';
import { CoordinationError } from './errors.js';

/**
 * The backup in an S3 bucket, through the offset store's conditional-write
 * adapter (`S3LeaseObjects`: If-None-Match / If-Match, and its reading of
 * S3's lost-race answers). Loaded on first use, so the AWS SDK is needed only
 * by a mode 1 that backs up to S3.
 */
export async function s3BackupStore(
  s3: S3Client | S3ClientConfig,
  bucket: string,
  key: string,
): Promise<BackupStore> {
  const { S3LeaseObjects } = await import('@thalweg/offset-store/s3');
  const objects = new S3LeaseObjects(s3, bucket);
  const failed = (what: string, cause: unknown) =>
    new CoordinationError(
      'TWG_COORDINATION_BACKUP_FAILED',
      `${what} ${objects.where(key)} failed`,
      cause,
    );
  return {
    async read() {
      try {
        return await objects.get(key);
      } catch (e) {
        throw failed('reading', e);
      }
    },
    async write(body, etag) {
      let written: boolean;
      try {
        written =
          etag === null ? await objects.create(key, body) : await objects.replace(key, body, etag);
      } catch (e) {
        throw failed('writing', e);
      }
      if (!written) return null;
      // S3 answers a put with the new ETag, but the adapter does not pass it
      // on; one read gets it (a backup is written once an interval).
      try {
        return (await objects.get(key))?.etag ?? null;
      } catch (e) {
        throw failed('reading back', e);
      }
    },
    close: () => objects.close(),
  };
}
