import { ConfigError } from '@thalweg/connector-core';
import { InMemoryLeaseStore } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { coordination, type CoordinationOptions } from '../src/index.js';

async function refusal(options: unknown): Promise<ConfigError> {
  const outcome = await coordination(options as CoordinationOptions).then(
    () => new Error('expected a ConfigError'),
    (e: unknown) => e,
  );
  if (outcome instanceof ConfigError) return outcome;
  throw outcome;
}

describe('coordination options', () => {
  it('refuses mode 2: strictly worse than 1, since both nodes are needed for a quorum', async () => {
    const e = await refusal({ mode: 2, endpoints: ['http://127.0.0.1:1'] });
    expect(e.path).toBe('coordination.mode');
    expect(e.reason).toContain('its quorum is 2, so losing either node halts every write');
    expect(e.reason).toContain('strictly worse than mode 1');
  });

  it.each([
    [4, 3, '1 failure'],
    [6, 5, '2 failures'],
  ])(
    'refuses the even size %i: no more failures tolerated than %i',
    async (mode, below, tolerated) => {
      const e = await refusal({ mode, endpoints: ['http://127.0.0.1:1'] });
      expect(e.path).toBe('coordination.mode');
      expect(e.reason).toContain(`tolerates ${tolerated}, no more than a cluster of ${below}`);
      expect(e.reason).toContain('use an odd size');
    },
  );

  it.each([9, -1, 1.5, '3', undefined])('refuses %s as not a mode', async (mode) => {
    const e = await refusal({ mode });
    expect(e.path).toBe('coordination.mode');
    expect(e.reason).toContain('is not a mode: use 0 (off), 1 (single node), or 3, 5 or 7');
  });

  it('refuses a cluster mode without endpoints, and an unknown key, by their paths', async () => {
    expect((await refusal({ mode: 3 })).path).toBe('coordination.endpoints');
    expect((await refusal({ mode: 3, endpoints: ['ftp://x'] })).path).toBe(
      'coordination.endpoints[0]',
    );
    expect((await refusal({ mode: 1, backup: { store: {} } })).path).toBe('coordination.backup');
    expect((await refusal({ mode: 0, backupIntervalMs: 5 })).path).toBe(
      'coordination.backupIntervalMs',
    );
  });

  it('mode 0 has no expiring set: asking for it is a ConfigError naming the mode', async () => {
    const c = await coordination({ mode: 0 });
    expect(c.health()).toEqual({ kind: 'off' });
    let thrown: unknown;
    try {
      c.expiringSet('seen');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({ path: 'coordination.mode' });
    expect((thrown as ConfigError).reason).toContain(
      'the expiring set (content dedup) needs mode 1, 3, 5 or 7',
    );
    await expect(c.membership.members()).rejects.toBeInstanceOf(ConfigError);
    await expect(c.leases.acquire('k', 'h', 1000)).rejects.toMatchObject({
      path: 'coordination.leases',
    });
  });

  it("mode 0 takes its leases, and elections, from an offset store's lease store", async () => {
    let now = 1000;
    const c = await coordination({ mode: 0, leases: new InMemoryLeaseStore({ now: () => now }) });
    const lease = await c.election.campaign('recovery', 'pod-a', 500);
    expect(lease).toMatchObject({ holder: 'pod-a' });
    expect(await c.election.campaign('recovery', 'pod-b', 500)).toBeNull();
    now += 500;
    expect(await c.election.leader('recovery')).toBeNull();
    expect(await c.leases.acquire('election/recovery', 'pod-b', 500)).toMatchObject({
      holder: 'pod-b',
    });
  });
});
