import { beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { s3Endpoint, uniqueName } from '../src/index.js';

// The offset store's S3 tier relies on these two answers; an S3 server that
// ignores the conditions (as s3rver does) would let concurrent writers
// overwrite each other's coverage, which is silent loss.
describe('S3 service honours conditional writes', () => {
  const env = s3Endpoint();
  const s3 = new S3Client({
    endpoint: env.endpoint,
    region: env.region,
    forcePathStyle: true,
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
  });
  const Bucket = uniqueName('twg-probe');
  const Key = 'coverage/sink-a.json';

  beforeAll(async () => {
    await s3.send(new CreateBucketCommand({ Bucket }));
  });

  async function statusOf(command: PutObjectCommand): Promise<number> {
    try {
      const out = await s3.send(command);
      return out.$metadata.httpStatusCode ?? 0;
    } catch (e) {
      if (e instanceof S3ServiceException) return e.$metadata.httpStatusCode ?? 0;
      throw e;
    }
  }

  it('answers 412 to a second create-only put', async () => {
    const create = () => new PutObjectCommand({ Bucket, Key, Body: 'v1', IfNoneMatch: '*' });
    expect(await statusOf(create())).toBe(200);
    expect(await statusOf(create())).toBe(412);
  });

  it('answers 412 to a compare-and-swap with a stale ETag and 200 with the current one', async () => {
    const current = await s3.send(new GetObjectCommand({ Bucket, Key }));
    const etag = current.ETag ?? '';
    expect(etag).not.toBe('');
    await current.Body?.transformToString();

    expect(
      await statusOf(new PutObjectCommand({ Bucket, Key, Body: 'v2', IfMatch: '"0000stale0000"' })),
    ).toBe(412);
    expect(await statusOf(new PutObjectCommand({ Bucket, Key, Body: 'v2', IfMatch: etag }))).toBe(
      200,
    );
    // The first swap moved the ETag on, so repeating it with the old one fails.
    expect(await statusOf(new PutObjectCommand({ Bucket, Key, Body: 'v3', IfMatch: etag }))).toBe(
      412,
    );
    const body = await (
      await s3.send(new GetObjectCommand({ Bucket, Key }))
    ).Body?.transformToString();
    expect(body).toBe('v2');
  });
});
