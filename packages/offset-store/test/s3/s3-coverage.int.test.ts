import { beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { s3Endpoint, uniqueName } from '@thalweg/test-services';
import { S3Coverage } from '../../src/s3/s3-coverage.js';
import { A, B, describeCoverageContract, receipt } from '../contract/coverage-contract.js';

const env = s3Endpoint();
const config = {
  endpoint: env.endpoint,
  region: env.region,
  forcePathStyle: true,
  credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
};
const s3 = new S3Client(config);
const Bucket = uniqueName('twg-coverage');
const key = { sink: A, topic: 'orders', partition: 0 };
const fresh = (sinks = [A, B], extra: Partial<ConstructorParameters<typeof S3Coverage>[0]> = {}) =>
  new S3Coverage({ s3: config, bucket: Bucket, prefix: `${uniqueName('p')}/`, sinks, ...extra });

async function body(objectKey: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket, Key: objectKey }));
  return (await out.Body?.transformToString()) ?? '';
}

beforeAll(async () => {
  await s3.send(new CreateBucketCommand({ Bucket }));
});

describeCoverageContract('S3 durable tier', {
  persistent: true,
  propertyRuns: 10,
  fresh: async (sinks) => {
    const prefix = `${uniqueName('c')}/`;
    const store = new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks });
    return {
      store,
      reopen: async () => {
        await store.close();
        return new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks });
      },
    };
  },
});

describe('S3 durable tier', () => {
  it('keeps one small object per sink', async () => {
    const store = fresh();
    await store.recordDurable([
      receipt(A, 0, 10),
      receipt(B, 0, 5),
      receipt(A, 20, 30, 'orders', 3),
    ]);
    const objects = await store.listObjects();
    expect(objects.map((k) => k.split('/').pop())).toEqual(['sink-a.json', 'sink-b.json']);
    const doc = JSON.parse(await body(objects[0]!)) as unknown;
    expect(doc).toEqual({
      format: 'thalweg.coverage',
      version: 1,
      sink: 'sink-a',
      destinations: [
        { topic: 'orders', partition: 0, ranges: [[0, 10]] },
        { topic: 'orders', partition: 3, ranges: [[20, 30]] },
      ],
    });
    await store.close();
  });

  it('unions the coverage of 8 concurrent writers (separate clients) exactly', async () => {
    const prefix = `${uniqueName('race')}/`;
    const writers = Array.from(
      { length: 8 },
      () => new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks: [A] }),
    );
    const truth = new Set<number>();
    let retried = 0;
    await Promise.all(
      writers.map(async (w, i) => {
        for (let round = 0; round < 6; round++) {
          const s1 = (round * 37 + i * 11) % 300;
          const s2 = 1000 + i * 100 + round * 8;
          const ranges: [number, number][] = [
            [s1, s1 + 4 + (i % 3)],
            [s2, s2 + 3],
          ];
          for (const [s, e] of ranges) for (let o = s; o < e; o++) truth.add(o);
          await w.recordDurable(ranges.map(([s, e]) => receipt(A, s, e)));
          if (w.lastAttempts > 1) retried += 1;
        }
      }),
    );
    const covered = await writers[0]!.covered(key);
    for (let o = 0; o < 1900; o++) expect(covered.contains(o)).toBe(truth.has(o));
    // The race was real: some writes lost their compare-and-swap and retried.
    expect(retried).toBeGreaterThan(0);
    await Promise.all(writers.map((w) => w.close()));
  });

  it('refuses a corrupted object with a clear error and leaves it untouched', async () => {
    const prefix = `${uniqueName('bad')}/`;
    const store = new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks: [A] });
    const objectKey = `${prefix}coverage/sink-a.json`;
    for (const garbage of [
      '{not json',
      '{"format":"thalweg.coverage","version":1,"sink":"sink-a","destinations":[{"topic":"orders","partition":0,"ranges":[[9,3]]}]}',
    ]) {
      await s3.send(new PutObjectCommand({ Bucket, Key: objectKey, Body: garbage }));
      const err = await store.recordDurable([receipt(A, 0, 10)]).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'TWG_COVERAGE_CORRUPT' });
      expect((err as Error).message).toContain(objectKey);
      expect(await body(objectKey)).toBe(garbage);
      await expect(store.covered(key)).rejects.toMatchObject({ code: 'TWG_COVERAGE_CORRUPT' });
    }
    await store.close();
  });

  it('refuses an object of a newer format version and leaves it untouched', async () => {
    const prefix = `${uniqueName('new')}/`;
    const store = new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks: [A] });
    const objectKey = `${prefix}coverage/sink-a.json`;
    const newer = JSON.stringify({
      format: 'thalweg.coverage',
      version: 2,
      sink: 'sink-a',
      destinations: [],
    });
    await s3.send(new PutObjectCommand({ Bucket, Key: objectKey, Body: newer }));
    await expect(store.recordDurable([receipt(A, 0, 10)])).rejects.toMatchObject({
      code: 'TWG_COVERAGE_SCHEMA_NEWER',
    });
    expect(await body(objectKey)).toBe(newer);
    await store.close();
  });

  it('gives up after the bounded attempts when every compare-and-swap loses, writing nothing', async () => {
    // A client whose every conditional put is answered as if another writer won.
    const client = new S3Client(config);
    let puts = 0;
    const send = client.send.bind(client) as (c: unknown) => Promise<unknown>;
    (client as unknown as { send: (c: unknown) => Promise<unknown> }).send = async (command) => {
      if (command instanceof PutObjectCommand) {
        puts += 1;
        throw new S3ServiceException({
          name: 'PreconditionFailed',
          $fault: 'client',
          $metadata: { httpStatusCode: 412 },
        });
      }
      return send(command);
    };
    const store = new S3Coverage({
      s3: client,
      bucket: Bucket,
      prefix: `${uniqueName('lose')}/`,
      sinks: [A],
      retry: { maxAttempts: 4, baseDelayMs: 1 },
    });
    const err = await store.recordDurable([receipt(A, 0, 10)]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWG_COVERAGE_CONTENTION' });
    expect((err as Error).message).toMatch(/4 conditional writes lost/);
    expect(puts).toBe(4);
    await store.close();
    client.destroy();
  });

  it('unions duplicate entries of one destination in a stored object, never keeping only the last', async () => {
    const prefix = `${uniqueName('dup')}/`;
    const store = new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks: [A] });
    const objectKey = `${prefix}coverage/sink-a.json`;
    // Not normal form, but every range in it is a recorded claim.
    const stored = JSON.stringify({
      format: 'thalweg.coverage',
      version: 1,
      sink: 'sink-a',
      destinations: [
        { topic: 'orders', partition: 0, ranges: [[0, 10]] },
        { topic: 'orders', partition: 0, ranges: [[20, 30]] },
      ],
    });
    await s3.send(new PutObjectCommand({ Bucket, Key: objectKey, Body: stored }));
    const both = [
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ];
    expect((await store.covered(key)).ranges()).toEqual(both);
    await store.recordDurable([receipt(A, 40, 50)]);
    expect((await store.covered(key)).ranges()).toEqual([...both, { start: 40, end: 50 }]);
    await store.close();
  });

  it('keeps the later of duplicate cursor entries in a stored object', async () => {
    const prefix = `${uniqueName('dupc')}/`;
    const store = new S3Coverage({ s3: config, bucket: Bucket, prefix, sinks: [A] });
    const cursor = (nextOffset: number) => ({ kind: 'stream-token', token: 't', nextOffset });
    await s3.send(
      new PutObjectCommand({
        Bucket,
        Key: `${prefix}cursors/files.json`,
        Body: JSON.stringify({
          format: 'thalweg.cursors',
          version: 1,
          source: 'files',
          cursors: [
            { topic: 'events', partition: 0, cursor: cursor(12) },
            { topic: 'events', partition: 0, cursor: cursor(7) },
          ],
        }),
      }),
    );
    const at = { source: 'files', topic: 'events', partition: 0 };
    expect(await store.loadCursor(at)).toEqual(cursor(12));
    await store.saveCursor(at, { kind: 'stream-token', token: 't', nextOffset: 9 });
    expect(await store.loadCursor(at)).toEqual(cursor(12));
    await store.close();
  });
});
