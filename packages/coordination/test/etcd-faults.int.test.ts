import { privateEtcd, waitFor, type PrivateEtcd } from '@thalweg/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../src/index.js';
import { binaryKeys, heldOf, placesOf } from './support/binary-set-contract.js';
import { openOnEtcd } from './support/etcd-fixture.js';

// Members are killed here: on a cluster of this file's own (port base 28379),
// never the shared one other files use meanwhile.
let cluster: PrivateEtcd;
beforeAll(async () => {
  cluster = await privateEtcd(28379);
}, 60_000);
afterAll(async () => {
  await cluster.down();
});
const member = (verb: 'kill-member' | 'start-member', n: 1 | 2 | 3) =>
  verb === 'kill-member' ? cluster.kill(n) : cluster.start(n);

describe('etcd faults', () => {
  it('one member of three killed: coordination continues, health says 2 of 3', async () => {
    const c = await openOnEtcd({ healthIntervalMs: 100 }, cluster);
    const lease = (await c.leases.acquire('w/1', 'pod-a', 5000)) as Lease;
    await member('kill-member', 3);
    await waitFor(
      () => c.health().kind === 'quorum' && (c.health() as { reachable: number }).reachable === 2,
      () => `health 2 of 3 (now ${JSON.stringify(c.health())})`,
    );
    expect(await c.leases.renew(lease, 5000)).toMatchObject({ token: lease.token });
    await c.expiringSet('seen').addMany(['h1'], 60_000);
    expect(await c.expiringSet('seen').hasMany(['h1', 'h2'])).toEqual([true, false]);
    expect(await c.counters.add('n', 1)).toBe(1);
    await member('start-member', 3);
    await waitFor(
      () => (c.health() as { reachable?: number }).reachable === 3,
      () => `health 3 of 3 again (now ${JSON.stringify(c.health())})`,
    );
    await c.close();
  });

  it('two of three killed: no quorum, and a lease waits out its TTL once they return', async () => {
    const c = await openOnEtcd({ healthIntervalMs: 200 }, cluster);
    const lease = (await c.leases.acquire('w/2', 'pod-a', 2000)) as Lease;
    const unwritten: number[] = [];
    const seen = c.binarySet?.('seen', { onUnwritten: (keys) => unwritten.push(keys) });
    if (seen === undefined) throw new Error('etcd offers binary sets');
    await seen.ready();
    seen.claimMany(binaryKeys(1), 1, 60_000, placesOf(1));
    await seen.flushed();
    await member('kill-member', 2);
    await member('kill-member', 3);
    // Killing the leader first can read as no quorum with two still reachable
    // (no leader yet): the wait is for the state the next line asserts.
    await waitFor(
      () => {
        const h = c.health() as { kind: string; reachable?: number };
        return h.kind === 'no-quorum' && h.reachable === 1;
      },
      () => `health no-quorum with 1 of 3 reachable (now ${JSON.stringify(c.health())})`,
    );
    expect(c.health()).toMatchObject({ kind: 'no-quorum', members: 3, reachable: 1 });
    await expect(c.leases.acquire('w/2', 'pod-b', 2000)).rejects.toMatchObject({
      code: 'TWG_COORDINATION_UNAVAILABLE',
    });
    // The binary set throws at once rather than answer from a copy nobody keeps current.
    const unavailable = { code: 'TWG_COORDINATION_UNAVAILABLE' };
    expect(() => seen.getMany(binaryKeys(1), 1)).toThrow(expect.objectContaining(unavailable));
    expect(() => seen.claimMany(binaryKeys(2), 1, 60_000, placesOf(1))).toThrow(
      expect.objectContaining(unavailable),
    );
    await member('start-member', 2);
    await member('start-member', 3);
    await waitFor(() => c.health().kind === 'quorum', 'quorum again', { timeoutMs: 30_000 });
    // It answers again, still holding what it held, and its claims are written.
    await waitFor(
      () => {
        try {
          return heldOf(seen, [1, 2]).join() === '1';
        } catch {
          return false;
        }
      },
      'the binary set answering again',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    seen.claimMany(binaryKeys(2), 1, 60_000, placesOf(1));
    await seen.flushed();
    expect(unwritten).toEqual([]);
    // The old claim is still there until its TTL passes on the cluster; then pod-b gets it.
    await waitFor(
      async () => (await c.leases.acquire('w/2', 'pod-b', 2000)) !== null,
      'pod-b claiming w/2 once its TTL passed',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    expect(await c.leases.renew(lease, 2000)).toBeNull();
    await c.close();
  }, 120_000);
});
