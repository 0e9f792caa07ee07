import { beforeAll, describe, expect, it } from 'vitest';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { s3Endpoint, uniqueName } from '@thalweg/test-services';
import {
  S3LeaseObjects,
  type LeaseObjects,
  type StoredObject,
} from '../../src/lease/lease-objects.js';
import type { Lease } from '../../src/lease/lease-store.js';
import { S3LeaseStore, type S3LeaseStoreOptions } from '../../src/lease/s3-lease-store.js';
import { refusal } from '../config-refusal.js';
import { describeLeaseContract } from './lease-contract.js';

const env = s3Endpoint();
const config = {
  endpoint: env.endpoint,
  region: env.region,
  forcePathStyle: true,
  credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
};
const s3 = new S3Client(config);
const Bucket = uniqueName('twg-lease');

beforeAll(async () => {
  await s3.send(new CreateBucketCommand({ Bucket }));
});

type Extra = Omit<S3LeaseStoreOptions, 's3' | 'bucket' | 'objects' | 'prefix'>;

/** A store over a fresh prefix; margin 0 unless a test is about the margin. */
function open(prefix = `${uniqueName('l')}/`, extra: Extra = {}): Promise<S3LeaseStore> {
  return S3LeaseStore.open({ s3: config, bucket: Bucket, prefix, clockSkewMarginMs: 0, ...extra });
}

async function body(objectKey: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket, Key: objectKey }));
  return (await out.Body?.transformToString()) ?? '';
}

async function put(objectKey: string, text: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket, Key: objectKey, Body: text }));
}

/** The real adapter with hooks in front of its conditional writes. */
class InjectedObjects implements LeaseObjects {
  readonly inner: S3LeaseObjects;
  writes = 0;
  onWrite: ((write: () => Promise<boolean>) => Promise<boolean>) | null = null;
  onRemove: ((objectKey: string) => Promise<void>) | null = null;

  constructor(client: S3Client = s3) {
    this.inner = new S3LeaseObjects(client, Bucket);
  }

  get(objectKey: string): Promise<StoredObject | null> {
    return this.inner.get(objectKey);
  }
  create(objectKey: string, text: string): Promise<boolean> {
    return this.write(() => this.inner.create(objectKey, text));
  }
  replace(objectKey: string, text: string, etag: string): Promise<boolean> {
    return this.write(() => this.inner.replace(objectKey, text, etag));
  }
  async remove(objectKey: string, etag: string): Promise<boolean> {
    await this.onRemove?.(objectKey);
    return this.inner.remove(objectKey, etag);
  }
  list(prefix: string): Promise<string[]> {
    return this.inner.list(prefix);
  }
  where(objectKey: string): string {
    return this.inner.where(objectKey);
  }
  async close(): Promise<void> {
    await this.inner.close();
  }
  private async write(write: () => Promise<boolean>): Promise<boolean> {
    this.writes += 1;
    return this.onWrite === null ? write() : this.onWrite(write);
  }
}

// The store's clock is injected (S3 has none of its own): expiry moves only
// when a test advances it, however slow the machine.
describeLeaseContract('S3', {
  ttlMs: 300,
  fresh: async () => {
    let now = Date.now();
    const store = await open(undefined, { now: () => now });
    return {
      store,
      advance: async (ms: number) => {
        now += ms;
      },
    };
  },
});

describe('S3LeaseStore', () => {
  it('keeps one JSON object per key under <prefix>leases/', async () => {
    const prefix = `${uniqueName('layout')}/`;
    const store = await open(prefix);
    const lease = await store.claim('sink-a/orders/0/7', 'worker-1', 60_000);
    const objectKey = `${prefix}leases/sink-a%2Forders%2F0%2F7.json`;
    expect(JSON.parse(await body(objectKey))).toEqual({
      format: 'thalweg.lease',
      version: 1,
      key: 'sink-a/orders/0/7',
      holder: 'worker-1',
      token: lease?.token,
      expiresAt: lease?.expiresAt,
      state: 'held',
      completedAt: null,
    });
    await store.close();
  });

  it('gives a key to exactly one of 8 concurrent claimers (separate clients), round after round', async () => {
    const prefix = `${uniqueName('race')}/`;
    const clients = Array.from({ length: 8 }, () => new S3Client(config));
    const objects = clients.map((c) => new InjectedObjects(c));
    const stores = await Promise.all(
      objects.map((o) => S3LeaseStore.open({ objects: o, prefix, clockSkewMarginMs: 0 })),
    );
    let lastToken = 0;
    let raced = 0;
    for (let round = 0; round < 4; round++) {
      const writesBefore = objects.reduce((n, o) => n + o.writes, 0);
      const won = await Promise.all(
        stores.map((s, i) => s.claim('sink-a/orders/0/3', `worker-${i}`, 60_000)),
      );
      const winners = won.filter((l): l is Lease => l !== null);
      expect(winners.length).toBe(1);
      const winner = winners[0]!;
      expect(winner.token).toBeGreaterThan(lastToken);
      lastToken = winner.token;
      expect(await stores[0]!.state('sink-a/orders/0/3')).toEqual({ kind: 'held', lease: winner });
      if (objects.reduce((n, o) => n + o.writes, 0) - writesBefore > 1) raced += 1;
      // Released, not waited out: the next round races for it at once, and a
      // slow machine cannot expire a lease between the claim and the check.
      await stores[won.indexOf(winner)]!.release(winner);
    }
    // The race was real: in some round several claimants wrote, and the
    // conditional writes, not the reads, picked the one winner.
    expect(raced).toBeGreaterThan(0);
    await Promise.all(stores.map((s) => s.close()));
    for (const c of clients) c.destroy();
  });

  it('keeps a lease from claimants whose clock runs ahead by less than clockSkewMarginMs', async () => {
    const prefix = `${uniqueName('skew')}/`;
    const t = 1_767_225_600_000;
    const holder = await open(prefix, { now: () => t });
    const ahead = (ms: number, margin: number) =>
      open(prefix, { now: () => t + ms, clockSkewMarginMs: margin });
    // Each case on its own key, claimed at t with a 1 s TTL.
    for (const key of ['a', 'b', 'c'])
      expect(await holder.claim(key, 'holder', 1000)).not.toBeNull();

    // Why the margin exists: 1.5 s ahead and no margin, the lease is taken early.
    const careless = await ahead(1500, 0);
    expect(await careless.claim('a', 'thief', 1000)).toMatchObject({ holder: 'thief' });
    // With a 2 s margin the same clock sees the lease as held and leaves it.
    const careful = await ahead(1500, 2000);
    expect(careful.clockSkewMarginMs).toBe(2000);
    expect((await careful.state('b')).kind).toBe('held');
    expect(await careful.claim('b', 'other', 1000)).toBeNull();
    // Past expiry plus the margin, it is claimable.
    const later = await ahead(3001, 2000);
    expect((await later.state('c')).kind).toBe('expired');
    expect(await later.claim('c', 'other', 1000)).toMatchObject({ holder: 'other' });
    await Promise.all([holder, careless, careful, later].map((s) => s.close()));
  });

  it('refuses a corrupt or foreign object at a key with an error naming it, and leaves it as it was', async () => {
    const prefix = `${uniqueName('bad')}/`;
    const store = await open(prefix);
    const key = 'sink-a/orders/0/9';
    const objectKey = `${prefix}leases/sink-a%2Forders%2F0%2F9.json`;
    const valid = {
      format: 'thalweg.lease',
      version: 1,
      key,
      holder: 'h',
      token: 3,
      expiresAt: 0,
      state: 'held',
      completedAt: null,
    };
    for (const garbage of [
      '{not json',
      '[]',
      JSON.stringify({ ...valid, format: 'thalweg.coverage' }),
      JSON.stringify({ ...valid, key: 'sink-a/orders/0/8' }),
      JSON.stringify({ ...valid, token: -1 }),
      JSON.stringify({ ...valid, state: 'taken' }),
      JSON.stringify({ ...valid, state: 'complete' }),
    ]) {
      await put(objectKey, garbage);
      for (const call of [
        () => store.claim(key, 'worker-1', 1000),
        () => store.state(key),
        () => store.renew({ key, holder: 'h', token: 3, expiresAt: 0 }, 1000),
        () => store.list('sink-a/'),
        () => store.clearCompleted(''),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err, garbage).toMatchObject({ code: 'TWG_LEASE_CORRUPT' });
        expect((err as Error).message).toContain(`lease "${key}"`);
        expect((err as Error).message).toContain(objectKey);
      }
      expect(await body(objectKey)).toBe(garbage);
    }
    const newer = JSON.stringify({ ...valid, version: 2 });
    await put(objectKey, newer);
    await expect(store.claim(key, 'worker-1', 1000)).rejects.toMatchObject({
      code: 'TWG_LEASE_FORMAT_NEWER',
    });
    expect(await body(objectKey)).toBe(newer);

    // An object under leases/ that this store would never have written.
    const stray = `${prefix}leases/notes.txt`;
    await put(stray, 'hello');
    const err = await store.list('').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWG_LEASE_CORRUPT' });
    expect((err as Error).message).toContain(stray);
    expect(await body(stray)).toBe('hello');
    await store.close();
  });

  it('recognises its own write when the answer to it was lost', async () => {
    const objects = new InjectedObjects();
    const store = await S3LeaseStore.open({
      objects,
      prefix: `${uniqueName('lost')}/`,
      clockSkewMarginMs: 0,
    });
    // The write lands, but the caller hears "precondition failed" (as when
    // the SDK retries a conditional put whose first attempt succeeded).
    objects.onWrite = async (write) => {
      expect(await write()).toBe(true);
      return false;
    };
    const lease = await store.claim('w/1', 'worker-1', 60_000);
    if (lease === null) throw new Error('the landed claim was not recognised');
    const renewed = await store.renew(lease, 120_000);
    expect(renewed).toMatchObject({ token: lease.token });
    expect(await store.complete(lease)).toBe(true);
    expect(await store.state('w/1')).toMatchObject({ kind: 'complete', holder: 'worker-1' });
    expect(objects.writes).toBe(3);
    await store.close();
  });

  it('gives up after the bounded attempts when every conditional write loses, writing nothing', async () => {
    const objects = new InjectedObjects();
    const store = await S3LeaseStore.open({
      objects,
      prefix: `${uniqueName('lose')}/`,
      retry: { maxAttempts: 4, baseDelayMs: 1 },
    });
    objects.onWrite = async () => false;
    const err = await store.claim('w/1', 'worker-1', 1000).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWG_LEASE_CONTENTION', errorClass: 'transient' });
    expect((err as Error).message).toContain('"w/1"');
    expect(objects.writes).toBe(4);
    expect(await store.state('w/1')).toEqual({ kind: 'free' });
    await store.close();
  });

  it('reports a failed write as TWG_LEASE_STORE_FAILED, changing nothing, and recovers', async () => {
    const objects = new InjectedObjects();
    const store = await S3LeaseStore.open({ objects, prefix: `${uniqueName('fail')}/` });
    const lease = await store.claim('w/1', 'worker-1', 60_000);
    if (lease === null) throw new Error('claim refused');
    objects.onWrite = async () => {
      throw new Error('connection reset');
    };
    const err = await store.renew(lease, 120_000).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TWG_LEASE_STORE_FAILED', errorClass: 'transient' });
    expect(await store.state('w/1')).toEqual({ kind: 'held', lease });
    objects.onWrite = null;
    expect(await store.renew(lease, 120_000)).toMatchObject({ token: lease.token });
    await store.close();
  });

  it('clearCompleted never deletes a key that was cleared and claimed again meanwhile', async () => {
    const prefix = `${uniqueName('clear')}/`;
    const objects = new InjectedObjects();
    const store = await S3LeaseStore.open({ objects, prefix, clockSkewMarginMs: 0 });
    const other = await open(prefix);
    const lease = await store.claim('w/1', 'worker-1', 60_000);
    if (lease === null) throw new Error('claim refused');
    expect(await store.complete(lease)).toBe(true);
    let fresh: Lease | null = null;
    // Between this store's read and its delete, another planner clears the
    // key and a worker claims it again.
    objects.onRemove = async () => {
      objects.onRemove = null;
      expect(await other.clearCompleted('w/')).toBe(1);
      fresh = await other.claim('w/1', 'worker-2', 60_000);
    };
    expect(await store.clearCompleted('w/')).toBe(0);
    expect(fresh).not.toBeNull();
    expect(await store.state('w/1')).toEqual({ kind: 'held', lease: fresh });
    await Promise.all([store.close(), other.close()]);
  });

  it('reports a missing bucket as a failure, never as a free key', async () => {
    const store = await S3LeaseStore.open({ s3: config, bucket: uniqueName('absent') });
    await expect(store.state('w/1')).rejects.toMatchObject({ code: 'TWG_LEASE_STORE_FAILED' });
    await expect(store.claim('w/1', 'h', 1000)).rejects.toMatchObject({
      code: 'TWG_LEASE_STORE_FAILED',
    });
    await store.close();
  });

  it('refuses bad options naming the field (s3Leases. paths, ADR 0015)', async () => {
    const path = async (run: () => unknown) => (await refusal(run)).path;
    expect(await path(() => open(undefined, { clockSkewMarginMs: -1 }))).toBe(
      's3Leases.clockSkewMarginMs',
    );
    expect(await path(() => open(undefined, { retry: { maxAttempts: 0 } }))).toBe(
      's3Leases.retry.maxAttempts',
    );
    expect(await path(() => S3LeaseStore.open({ s3: config, bucket: '' }))).toBe('s3Leases.bucket');
    expect(
      await path(() => S3LeaseStore.open({ s3: config, bucket: Bucket, prefix: 'p\u0000' })),
    ).toBe('s3Leases.prefix');
  });
});
