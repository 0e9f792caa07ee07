import { GetObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { IcebergError } from '../errors.js';
import type { FileStore } from '../file-store.js';

/**
 * Objects in S3 (`s3://bucket/key`, also `s3a:` and `s3n:` as Hadoop-era
 * writers spell it). Takes a client or the config to make one (endpoint,
 * `forcePathStyle: true` for MinIO or moto, credentials).
 */
export function s3FileStore(s3: S3Client | S3ClientConfig): FileStore {
  const client = s3 instanceof S3Client ? s3 : new S3Client(s3);
  return {
    async read(location) {
      const m = /^s3[an]?:\/\/([^/]+)\/(.+)$/.exec(location);
      if (m === null) {
        throw new IcebergError(
          'TWG_ICEBERG_FILE_UNREADABLE',
          location,
          'not an s3://bucket/key location',
        );
      }
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: m[1], Key: m[2] }));
        if (out.Body === undefined) throw new Error('the response has no body');
        return await out.Body.transformToByteArray();
      } catch (e) {
        throw new IcebergError('TWG_ICEBERG_FILE_UNREADABLE', location, String(e), { cause: e });
      }
    },
  };
}
