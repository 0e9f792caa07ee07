import { describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Lease, LeaseState } from '../../src/lease/lease-store.js';
import type { PostgresLeaseStoreOptions } from '../../src/lease/postgres-lease-store.js';
import type { S3LeaseStoreOptions } from '../../src/lease/s3-lease-store.js';
import type { LeaseObjects } from '../../src/lease/lease-objects.js';

describe('lease types', () => {
  it('makes a state say which kind it is before it yields a lease', () => {
    const state = { kind: 'free' } as LeaseState;
    // @ts-expect-error a free or complete state has no lease: narrow on `kind` first.
    expect(state.lease).toBeUndefined();
    const lease = state.kind === 'held' || state.kind === 'expired' ? state.lease : null;
    expect(lease).toBeNull();
  });

  it('keeps a lease immutable: a worker cannot extend it by hand', () => {
    const lease: Lease = { key: 'k', holder: 'h', token: 1, expiresAt: 10 };
    // @ts-expect-error only `renew` extends a lease.
    lease.expiresAt = 20;
    expect(lease.expiresAt).toBe(20);
  });

  it('takes a pool or a connection string for PostgreSQL, not both', async () => {
    // Never connects: a pool opens connections on its first query.
    const pool = new pg.Pool();
    const ok: PostgresLeaseStoreOptions[] = [{ pool }, { connectionString: 'postgres://x' }];
    // @ts-expect-error a store either borrows a pool or owns one.
    const both: PostgresLeaseStoreOptions = { pool, connectionString: 'postgres://x' };
    // @ts-expect-error one of them is required.
    const neither: PostgresLeaseStoreOptions = { schema: 'public' };
    expect([ok.length, both, neither].length).toBe(3);
    await pool.end();
  });

  it('takes an S3 client and bucket, or the object seam, not both', () => {
    const objects = {} as LeaseObjects;
    const ok: S3LeaseStoreOptions[] = [{ s3: {}, bucket: 'b' }, { objects }];
    // @ts-expect-error the seam already names its bucket.
    const both: S3LeaseStoreOptions = { objects, bucket: 'b' };
    expect([ok.length, both].length).toBe(2);
  });
});
