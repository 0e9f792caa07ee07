import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Endpoint, uniqueName } from '@thalweg/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordination, ManualScheduler } from '../src/index.js';

const env = s3Endpoint();
const s3 = new S3Client({
  endpoint: env.endpoint,
  region: env.region,
  forcePathStyle: true,
  credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
});
const bucket = uniqueName('twg-coord');

beforeAll(async () => {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(() => s3.destroy());

describe('mode 1 on S3', () => {
  it('backs up on a graceful close and restores at the next start', async () => {
    const key = `${uniqueName('node')}/backup.json`;
    const open = () =>
      coordination({ mode: 1, backup: { s3, bucket, key }, scheduler: new ManualScheduler() });
    const c = await open();
    await c.expiringSet('seen').addMany(['h1'], 600_000);
    const lease = await c.leases.acquire('w/1', 'pod-a', 600_000);
    await c.close();
    const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(JSON.parse(await stored.Body!.transformToString())).toMatchObject({ version: 1 });

    const again = await open();
    expect(await again.expiringSet('seen').hasMany(['h1', 'h2'])).toEqual([true, false]);
    expect(await again.leases.holder('w/1')).toEqual(lease);
    await again.close();
  });

  it('refuses a second node writing the same backup key', async () => {
    const key = `${uniqueName('node')}/backup.json`;
    const open = () =>
      coordination({ mode: 1, backup: { s3, bucket, key }, scheduler: new ManualScheduler() });
    const a = await open();
    const b = await open();
    await a.close();
    await expect(b.close()).rejects.toMatchObject({ code: 'TWG_COORDINATION_BACKUP_CONFLICT' });
  });
});
