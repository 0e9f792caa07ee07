import { describe, expect, it } from 'vitest';
import type { Coordination, Lease } from '../../src/index.js';

export interface CoordinationFixture {
  readonly coordination: Coordination;
  /**
   * Lets `ms` pass and then expects `check` to hold: a fake clock advanced
   * at once, or a real cluster waited on (with a deadline) until it holds.
   */
  readonly after: (ms: number, check: () => Promise<boolean>, what: string) => Promise<void>;
  /** Expects `check` to hold once the periodic work has run (driven, or waited on). */
  readonly eventually: (check: () => boolean | Promise<boolean>, what: string) => Promise<void>;
}

export interface CoordinationContractBackend {
  /** A coordination over fresh, isolated state. */
  fresh(): Promise<CoordinationFixture>;
  /** The TTL the suite uses: real for etcd (whose TTLs are whole seconds), so short. */
  readonly ttlMs: number;
}

/**
 * What every mode with state (1 and 3, 5, 7) and the in-memory fake must do
 * alike. Time passes through the fixture, never by sleeping here.
 */
export function describeCoordinationContract(
  name: string,
  backend: CoordinationContractBackend,
): void {
  const ttl = backend.ttlMs;

  describe(`Coordination contract: ${name}`, () => {
    it('leases: one holder at a time, renewed by its holder, released at once', async () => {
      const { coordination: c } = await backend.fresh();
      const lease = await c.leases.acquire('w/1', 'worker-1', ttl);
      expect(lease).toMatchObject({ key: 'w/1', holder: 'worker-1' });
      expect(await c.leases.acquire('w/1', 'worker-2', ttl)).toBeNull();
      expect(await c.leases.acquire('w/1', 'worker-1', ttl)).toBeNull();
      expect(await c.leases.holder('w/1')).toMatchObject({
        holder: 'worker-1',
        token: lease?.token,
      });
      const renewed = await c.leases.renew(lease as Lease, ttl);
      expect(renewed).toMatchObject({ holder: 'worker-1', token: lease?.token });
      await c.leases.release(lease as Lease);
      expect(await c.leases.holder('w/1')).toBeNull();
      const next = await c.leases.acquire('w/1', 'worker-2', ttl);
      expect(next?.token).toBeGreaterThan(lease?.token ?? Infinity);
      // The released holder is fenced off: its renew answers null.
      expect(await c.leases.renew(lease as Lease, ttl)).toBeNull();
      await c.close();
    });

    it('leases: an expired lease goes to the next claimant, and fences the old holder', async () => {
      const fx = await backend.fresh();
      const c = fx.coordination;
      const first = (await c.leases.acquire('w/2', 'worker-1', ttl)) as Lease;
      let second: Lease | null = null;
      await fx.after(
        ttl,
        async () => (second = await c.leases.acquire('w/2', 'worker-2', ttl)) !== null,
        'worker-2 claiming the expired lease',
      );
      expect((second as Lease | null)?.token).toBeGreaterThan(first.token);
      expect(await c.leases.renew(first, ttl)).toBeNull();
      await c.close();
    });

    it('election: one leader, observed, and a successor after it resigns', async () => {
      const fx = await backend.fresh();
      const c = fx.coordination;
      const seen: (string | null)[] = [];
      const stop = c.election.observe('recovery', (l) => seen.push(l?.holder ?? null));
      const leader = (await c.election.campaign('recovery', 'pod-a', ttl)) as Lease;
      expect(leader.holder).toBe('pod-a');
      expect(await c.election.campaign('recovery', 'pod-b', ttl)).toBeNull();
      expect((await c.election.leader('recovery'))?.holder).toBe('pod-a');
      expect(await c.election.keep(leader, ttl)).toMatchObject({ holder: 'pod-a' });
      await fx.eventually(() => seen.at(-1) === 'pod-a', 'the observer seeing pod-a lead');
      await c.election.resign(leader);
      expect(await c.election.leader('recovery')).toBeNull();
      expect((await c.election.campaign('recovery', 'pod-b', ttl))?.holder).toBe('pod-b');
      await fx.eventually(() => seen.at(-1) === 'pod-b', 'the observer seeing pod-b lead');
      stop();
      await c.close();
    });

    it('membership: joined members are listed, a leaver is not', async () => {
      const { coordination: c } = await backend.fresh();
      const a = await c.membership.join('pod-a', ttl, 'worker,quorum');
      await c.membership.join('pod-b', ttl);
      expect(await c.membership.members()).toEqual([
        { id: 'pod-a', info: 'worker,quorum' },
        { id: 'pod-b', info: '' },
      ]);
      await a.leave();
      expect(await c.membership.members()).toEqual([{ id: 'pod-b', info: '' }]);
      await c.close();
    });

    it('counters: add answers the new value, get reads it', async () => {
      const { coordination: c } = await backend.fresh();
      expect(await c.counters.get('dups')).toBe(0);
      expect(await c.counters.add('dups', 5)).toBe(5);
      expect(await c.counters.add('dups', -2)).toBe(3);
      const many = await Promise.all([1, 2, 3, 4].map(() => c.counters.add('dups', 1)));
      expect(many.sort()).toEqual([4, 5, 6, 7]);
      expect(await c.counters.get('dups')).toBe(7);
      await c.close();
    });

    it('expiring set: exact bulk membership, in the order asked', async () => {
      const { coordination: c } = await backend.fresh();
      const set = c.expiringSet('seen');
      const keys = Array.from({ length: 300 }, (_, i) => `hash-${i}`);
      expect(await set.hasMany(keys.slice(0, 3))).toEqual([false, false, false]);
      await set.addMany(
        keys.filter((_, i) => i % 2 === 0),
        ttl * 10,
      );
      const found = await set.hasMany(keys);
      expect(found).toEqual(keys.map((_, i) => i % 2 === 0));
      expect(await set.hasMany([])).toEqual([]);
      expect(await set.size()).toBe(150);
      // Another set of the same coordination shares nothing.
      expect(await c.expiringSet('other').hasMany(['hash-0'])).toEqual([false]);
      await c.close();
    });

    it('expiring set: a key keeps the value it was added with, and a re-add replaces it', async () => {
      const { coordination: c } = await backend.fresh();
      const set = c.expiringSet('valued');
      const keys = Array.from({ length: 200 }, (_, i) => `h-${i}`);
      await set.addMany(
        keys,
        ttl * 10,
        keys.map((k) => `id-of-${k}`),
      );
      await set.addMany(['plain'], ttl * 10);
      expect(await set.getMany([...keys, 'plain', 'absent'])).toEqual([
        ...keys.map((k) => `id-of-${k}`),
        '',
        null,
      ]);
      await set.addMany(['h-0'], ttl * 10, ['second']);
      expect(await set.getMany(['h-0', 'h-1'])).toEqual(['second', 'id-of-h-1']);
      await expect(set.addMany(['a', 'b'], ttl, ['only-one'])).rejects.toMatchObject({
        code: 'TWG_COORDINATION_INVALID',
        field: 'values',
      });
      await c.close();
    });

    it('expiring set: a key reads unseen once its TTL passed', async () => {
      const fx = await backend.fresh();
      const set = fx.coordination.expiringSet('seen');
      await set.addMany(['a', 'b'], ttl);
      expect(await set.hasMany(['a', 'b'])).toEqual([true, true]);
      await fx.after(
        ttl,
        async () => (await set.hasMany(['a', 'b'])).every((seen) => !seen),
        'a and b expiring',
      );
      await fx.coordination.close();
    });

    it('expiring set: over its bound, the oldest keys are evicted first', async () => {
      const { coordination: c } = await backend.fresh();
      const set = c.expiringSet('bounded', { maxEntries: 4 });
      await set.addMany(['k1', 'k2', 'k3'], ttl * 10);
      await set.addMany(['k4', 'k5'], ttl * 10);
      expect(await set.hasMany(['k1', 'k2', 'k3', 'k4', 'k5'])).toEqual([
        false,
        true,
        true,
        true,
        true,
      ]);
      await c.close();
    });

    it('refuses malformed input with TWG_COORDINATION_INVALID naming the field', async () => {
      const { coordination: c } = await backend.fresh();
      await expect(c.leases.acquire('w', 'h', 0)).rejects.toMatchObject({
        code: 'TWG_COORDINATION_INVALID',
        field: 'ttlMs',
      });
      await expect(c.expiringSet('s').hasMany(['ok', ''])).rejects.toMatchObject({
        code: 'TWG_COORDINATION_INVALID',
        field: 'keys[1]',
      });
      await expect(c.counters.add('n', 0.5)).rejects.toMatchObject({ field: 'delta' });
      await c.close();
    });
  });
}
