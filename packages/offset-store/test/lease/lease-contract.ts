import { describe, expect, it } from 'vitest';
import { MAX_LEASE_KEY_BYTES, MAX_LEASE_TTL_MS } from '../../src/lease/lease-input.js';
import type { Lease, LeaseState, LeaseStore } from '../../src/lease/lease-store.js';

export interface LeaseFixture {
  readonly store: LeaseStore;
  /** Lets `ms` pass on the store's clock: a fake clock, or real waiting. */
  readonly advance: (ms: number) => Promise<unknown>;
}

export interface LeaseContractBackend {
  /** A store over fresh, isolated storage. */
  fresh(): Promise<LeaseFixture>;
  /**
   * The TTL the suite claims with: waited out for real by real backends, so
   * short, but long enough that a lease stays live across a few calls.
   */
  readonly ttlMs: number;
}

/** Rejects with TWG_LEASE_INVALID naming `field`. */
export async function expectInvalid(call: Promise<unknown>, field: string): Promise<void> {
  const err = await call.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(err).toMatchObject({ code: 'TWG_LEASE_INVALID', field });
  expect((err as Error).message).toContain(`${field}:`);
}

function leaseOf(state: LeaseState): Lease | null {
  return state.kind === 'held' || state.kind === 'expired' ? state.lease : null;
}

/**
 * The behaviour every LeaseStore backend must show (in memory, PostgreSQL,
 * S3). Expiry is driven through `advance`, never asserted on wall time.
 */
export function describeLeaseContract(name: string, backend: LeaseContractBackend): void {
  const ttl = backend.ttlMs;
  const pastExpiry = Math.ceil(ttl * 1.5);

  describe(`LeaseStore contract: ${name}`, () => {
    it('claims a free key and reports it held', async () => {
      const { store } = await backend.fresh();
      const key = 'sink-a/orders/0/17';
      expect(await store.state(key)).toEqual({ kind: 'free' });
      const lease = await store.claim(key, 'worker-1', ttl);
      expect(lease).toMatchObject({ key, holder: 'worker-1' });
      expect(Number.isSafeInteger(lease?.token) && (lease?.token ?? 0) > 0).toBe(true);
      expect(Number.isSafeInteger(lease?.expiresAt) && (lease?.expiresAt ?? 0) > 0).toBe(true);
      expect(await store.state(key)).toEqual({ kind: 'held', lease });
      await store.close();
    });

    it('refuses a live lease to every other claimant, and to its own holder', async () => {
      const { store } = await backend.fresh();
      const first = await store.claim('w/1', 'worker-1', ttl);
      expect(await store.claim('w/1', 'worker-2', ttl)).toBeNull();
      expect(await store.claim('w/1', 'worker-1', ttl)).toBeNull();
      expect(await store.state('w/1')).toEqual({ kind: 'held', lease: first });
      await store.close();
    });

    it('lets another holder claim an expired lease with a higher token; the first has lost it', async () => {
      const { store, advance } = await backend.fresh();
      const first = await store.claim('w/1', 'worker-1', ttl);
      if (first === null) throw new Error('the first claim was refused');
      await advance(pastExpiry);
      expect(await store.state('w/1')).toEqual({ kind: 'expired', lease: first });
      const second = await store.claim('w/1', 'worker-2', ttl);
      if (second === null) throw new Error('the expired lease was not claimable');
      expect(second.holder).toBe('worker-2');
      expect(second.token).toBeGreaterThan(first.token);
      expect(await store.renew(first, ttl)).toBeNull();
      expect(await store.complete(first)).toBe(false);
      await store.release(first);
      expect(await store.state('w/1')).toEqual({ kind: 'held', lease: second });
      expect(await store.complete(second)).toBe(true);
      await store.close();
    });

    it('renew extends the lease under the same token', async () => {
      const { store, advance } = await backend.fresh();
      const lease = await store.claim('w/1', 'worker-1', ttl);
      if (lease === null) throw new Error('claim refused');
      const renewed = await store.renew(lease, ttl * 10);
      if (renewed === null) throw new Error('renew refused');
      expect(renewed).toMatchObject({ key: 'w/1', holder: 'worker-1', token: lease.token });
      expect(renewed.expiresAt).toBeGreaterThan(lease.expiresAt);
      await advance(pastExpiry);
      // Past the first TTL, within the renewed one.
      expect(leaseOf(await store.state('w/1'))).toEqual(renewed);
      expect((await store.state('w/1')).kind).toBe('held');
      expect(await store.claim('w/1', 'worker-2', ttl)).toBeNull();
      // The lease is named by holder and token; the expiry it carries does not matter.
      expect(await store.complete(lease)).toBe(true);
      await store.close();
    });

    it('an expired lease nobody claimed again is still its holder’s to renew', async () => {
      const { store, advance } = await backend.fresh();
      const lease = await store.claim('w/1', 'worker-1', ttl);
      if (lease === null) throw new Error('claim refused');
      await advance(pastExpiry);
      expect((await store.state('w/1')).kind).toBe('expired');
      const renewed = await store.renew(lease, ttl * 10);
      expect(renewed).toMatchObject({ token: lease.token, holder: 'worker-1' });
      expect(await store.state('w/1')).toEqual({ kind: 'held', lease: renewed });
      expect(await store.claim('w/1', 'worker-2', ttl)).toBeNull();
      await store.close();
    });

    it('release makes the key claimable at once, and the released lease is lost', async () => {
      const { store } = await backend.fresh();
      const first = await store.claim('w/1', 'worker-1', ttl);
      if (first === null) throw new Error('claim refused');
      await store.release(first);
      expect(await store.state('w/1')).toEqual({ kind: 'free' });
      const second = await store.claim('w/1', 'worker-2', ttl);
      if (second === null) throw new Error('the released key was not claimable');
      expect(second.token).toBeGreaterThan(first.token);
      expect(await store.renew(first, ttl)).toBeNull();
      expect(await store.complete(first)).toBe(false);
      await store.release(first);
      expect(await store.state('w/1')).toEqual({ kind: 'held', lease: second });
      await store.close();
    });

    it('complete is final until clearCompleted forgets it', async () => {
      const { store, advance } = await backend.fresh();
      const lease = await store.claim('w/1', 'worker-1', ttl);
      if (lease === null) throw new Error('claim refused');
      expect(await store.complete(lease)).toBe(true);
      // A retry of a complete whose answer was lost.
      expect(await store.complete(lease)).toBe(true);
      const done = await store.state('w/1');
      expect(done).toMatchObject({ kind: 'complete', holder: 'worker-1' });
      expect(Number.isSafeInteger(done.kind === 'complete' ? done.completedAt : NaN)).toBe(true);
      expect(await store.claim('w/1', 'worker-2', ttl)).toBeNull();
      await advance(pastExpiry);
      expect(await store.claim('w/1', 'worker-2', ttl)).toBeNull();
      expect(await store.renew(lease, ttl)).toBeNull();
      await store.release(lease);
      expect(await store.state('w/1')).toEqual(done);

      expect(await store.clearCompleted('x/')).toBe(0);
      expect(await store.clearCompleted('w/')).toBe(1);
      expect(await store.state('w/1')).toEqual({ kind: 'free' });
      expect(await store.complete(lease)).toBe(false);
      const again = await store.claim('w/1', 'worker-2', ttl);
      if (again === null) throw new Error('a cleared key was not claimable');
      // A fencing token is never handed out twice, even across a clear.
      expect(again.token).toBeGreaterThan(lease.token);
      await store.close();
    });

    it('lists the keys of a prefix in key order, and clears only completed ones', async () => {
      const { store } = await backend.fresh();
      const claim = async (key: string) => {
        const lease = await store.claim(key, `holder-of-${key}`, ttl * 10);
        if (lease === null) throw new Error(`claim of ${key} refused`);
        return lease;
      };
      const held = await claim('sink-a/orders/1/0');
      const first = await claim('sink-a/orders/0/1');
      expect(await store.complete(await claim('sink-a/orders/0/2'))).toBe(true);
      await store.release(await claim('sink-a/orders/0/3'));
      expect(await store.complete(await claim('sink-b/orders/0/1'))).toBe(true);

      const a = await store.list('sink-a/');
      expect(a.map((e) => [e.key, e.state.kind])).toEqual([
        ['sink-a/orders/0/1', 'held'],
        ['sink-a/orders/0/2', 'complete'],
        ['sink-a/orders/0/3', 'free'],
        ['sink-a/orders/1/0', 'held'],
      ]);
      expect(a[0]?.state).toEqual({ kind: 'held', lease: first });
      expect(a[3]?.state).toEqual({ kind: 'held', lease: held });
      expect(a[1]?.state).toMatchObject({
        kind: 'complete',
        holder: 'holder-of-sink-a/orders/0/2',
      });
      expect((await store.list('sink-a/orders/0/')).length).toBe(3);
      expect((await store.list('')).length).toBe(5);
      expect(await store.list('sink-c/')).toEqual([]);

      expect(await store.clearCompleted('sink-a/')).toBe(1);
      expect((await store.list('')).map((e) => e.key)).toEqual([
        'sink-a/orders/0/1',
        'sink-a/orders/0/3',
        'sink-a/orders/1/0',
        'sink-b/orders/0/1',
      ]);
      expect(await store.clearCompleted('')).toBe(1);
      expect(await store.clearCompleted('')).toBe(0);
      await store.close();
    });

    it('takes prefixes literally: wildcards, percent signs and non-ASCII keys', async () => {
      const { store } = await backend.fresh();
      const keys = ['w%/1', 'w_/1', 'wx/1', 'w\\/1', 'wé/🙂/1', 'w%2F/1'];
      for (const key of keys) expect(await store.claim(key, 'h', ttl * 10)).not.toBeNull();
      const listed = async (prefix: string) => (await store.list(prefix)).map((e) => e.key);
      expect(await listed('w%')).toEqual(['w%/1', 'w%2F/1']);
      expect(await listed('w%/')).toEqual(['w%/1']);
      expect(await listed('w_')).toEqual(['w_/1']);
      expect(await listed('w\\')).toEqual(['w\\/1']);
      expect(await listed('wé/🙂')).toEqual(['wé/🙂/1']);
      // UTF-8 byte order, the same on every backend.
      expect(await listed('w')).toEqual(['w%/1', 'w%2F/1', 'w\\/1', 'w_/1', 'wx/1', 'wé/🙂/1']);
      await store.close();
    });

    it('refuses malformed input naming the field, and changes nothing', async () => {
      const { store } = await backend.fresh();
      const lease = await store.claim('w/1', 'worker-1', ttl * 10);
      if (lease === null) throw new Error('claim refused');
      const before = await store.state('w/1');

      await expectInvalid(store.claim('', 'h', ttl), 'key');
      await expectInvalid(store.claim('a\u0000b', 'h', ttl), 'key');
      await expectInvalid(store.claim('x'.repeat(MAX_LEASE_KEY_BYTES + 1), 'h', ttl), 'key');
      // The bound is in UTF-8 bytes: 129 two-byte characters are 258 bytes.
      await expectInvalid(store.claim('é'.repeat(129), 'h', ttl), 'key');
      await expectInvalid(store.claim('bad\ud800', 'h', ttl), 'key');
      await expectInvalid(store.claim(42 as unknown as string, 'h', ttl), 'key');
      await expectInvalid(store.claim('w/2', '', ttl), 'holder');
      await expectInvalid(store.claim('w/2', 'h\u0000', ttl), 'holder');
      for (const bad of [0, -1, 1.5, NaN, Infinity, MAX_LEASE_TTL_MS + 1, '100']) {
        await expectInvalid(store.claim('w/2', 'h', bad as number), 'ttlMs');
      }
      await expectInvalid(store.renew(lease, 0), 'ttlMs');
      await expectInvalid(store.renew({ ...lease, token: 0 }, ttl), 'lease.token');
      await expectInvalid(store.renew({ ...lease, token: 2 ** 53 }, ttl), 'lease.token');
      await expectInvalid(store.complete({ ...lease, holder: '' }), 'lease.holder');
      await expectInvalid(store.complete({ ...lease, key: '' }), 'lease.key');
      await expectInvalid(store.release(null as unknown as Lease), 'lease');
      await expectInvalid(store.state(''), 'key');
      await expectInvalid(store.list('a\u0000'), 'prefix');
      await expectInvalid(store.clearCompleted('\u0000'), 'prefix');

      expect(await store.state('w/1')).toEqual(before);
      expect(await store.state('w/2')).toEqual({ kind: 'free' });
      // The bounds themselves are accepted.
      const longest = 'k'.repeat(MAX_LEASE_KEY_BYTES);
      expect(await store.claim(longest, 'h', MAX_LEASE_TTL_MS)).toMatchObject({ key: longest });
      expect((await store.list('k')).map((e) => e.key)).toEqual([longest]);
      await store.close();
    });

    it('refuses every call after close, and closes once', async () => {
      const { store } = await backend.fresh();
      const lease = await store.claim('w/1', 'worker-1', ttl);
      if (lease === null) throw new Error('claim refused');
      await store.close();
      await store.close();
      for (const call of [
        () => store.claim('w/2', 'h', ttl),
        () => store.renew(lease, ttl),
        () => store.complete(lease),
        () => store.release(lease),
        () => store.state('w/1'),
        () => store.list(''),
        () => store.clearCompleted(''),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: 'TWG_LEASE_CLOSED' });
      }
    });
  });
}
