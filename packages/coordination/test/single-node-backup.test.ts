import { describe, expect, it } from 'vitest';
import { BINARY_KEY_BYTES, coordination, ManualScheduler } from '../src/index.js';
import { FakeClock, MemoryBackupStore } from './support/memory-fixture.js';

async function open(store: MemoryBackupStore, clock = new FakeClock()) {
  const scheduler = new ManualScheduler();
  const c = await coordination({ mode: 1, backup: { store }, now: clock.now, scheduler });
  return { c, scheduler, clock };
}

describe('mode 1 backup and restore', () => {
  it('a graceful close takes a backup, and the next start restores it', async () => {
    const store = new MemoryBackupStore();
    const { c, clock } = await open(store);
    const lease = await c.leases.acquire('w/1', 'pod-a', 60_000);
    await c.expiringSet('seen').addMany(['h1', 'h2'], 60_000);
    await c.counters.add('dups', 3);
    expect(store.writes).toBe(0);
    await c.close();
    expect(store.writes).toBe(1);

    const { c: again } = await open(store, clock);
    expect(await again.leases.holder('w/1')).toEqual(lease);
    expect(await again.expiringSet('seen').hasMany(['h1', 'h2', 'h3'])).toEqual([
      true,
      true,
      false,
    ]);
    expect(await again.counters.get('dups')).toBe(3);
    // Tokens survive the restore: a new claim is fenced above every earlier one.
    await again.leases.release(lease!);
    expect((await again.leases.acquire('w/1', 'pod-b', 1000))?.token).toBeGreaterThan(lease!.token);
    await again.close();
  });

  it('backs up every interval; a crash loses only what changed since the last backup', async () => {
    const store = new MemoryBackupStore();
    const { c, scheduler, clock } = await open(store);
    await c.expiringSet('seen').addMany(['before'], 60_000);
    await scheduler.run();
    expect(store.writes).toBe(1);
    expect(c.health()).toEqual({ kind: 'single-node', lastBackupAt: clock.ms });
    await c.expiringSet('seen').addMany(['after'], 60_000);
    // No close: the node is lost. The next one starts from the last backup.
    const { c: next } = await open(store, clock);
    expect(await next.expiringSet('seen').hasMany(['before', 'after'])).toEqual([true, false]);
    await next.close();
  });

  it('what expired before the restore stays gone', async () => {
    const store = new MemoryBackupStore();
    const { c, clock } = await open(store);
    await c.leases.acquire('w/1', 'pod-a', 1000);
    await c.close();
    clock.ms += 1000;
    const { c: next } = await open(store, clock);
    expect(await next.leases.holder('w/1')).toBeNull();
    await next.close();
  });

  it('refuses a backup another node wrote meanwhile (two mode 1 nodes on one key)', async () => {
    const store = new MemoryBackupStore();
    const first = await open(store);
    const second = await open(store);
    await first.c.close();
    await expect(second.c.close()).rejects.toMatchObject({
      code: 'TWG_COORDINATION_BACKUP_CONFLICT',
    });
  });

  it('refuses to start on a backup that does not decode, leaving it as it was', async () => {
    const store = new MemoryBackupStore();
    store.body = '{"version":9}';
    await expect(open(store)).rejects.toMatchObject({ code: 'TWG_COORDINATION_BACKUP_CORRUPT' });
    expect(store.body).toBe('{"version":9}');
  });

  it('stops its periodic work on close', async () => {
    const { c, scheduler } = await open(new MemoryBackupStore());
    await c.membership.join('pod-a', 1000);
    expect(scheduler.size).toBeGreaterThan(0);
    await c.close();
    expect(scheduler.size).toBe(0);
    await expect(c.counters.get('x')).rejects.toMatchObject({ code: 'TWG_COORDINATION_CLOSED' });
  });

  it('backs up binary sets with their places, and restores them (a backup without any too)', async () => {
    const store = new MemoryBackupStore();
    const { c, clock } = await open(store);
    const keys = new Uint8Array(2 * BINARY_KEY_BYTES).fill(1);
    keys[BINARY_KEY_BYTES] = 2;
    const set = c.binarySet?.('dedup/s', { maxEntries: 10 });
    set?.addMany(keys, 2, 60_000, {
      partitions: Uint32Array.of(3, 4),
      offsets: Float64Array.of(10, 2 ** 40),
    });
    // A string set of the same name is another set.
    await c.expiringSet('dedup/s').addMany(['h'], 60_000);
    await c.close();
    expect(JSON.parse(store.body ?? '{}')).toHaveProperty('binarySets');

    const { c: again } = await open(store, clock);
    const answer = again.binarySet?.('dedup/s').getMany(keys, 2);
    expect(answer && [...answer.found]).toEqual([1, 1]);
    expect(answer && [...answer.partitions]).toEqual([3, 4]);
    expect(answer && [...answer.offsets]).toEqual([10, 2 ** 40]);
    expect(await again.expiringSet('dedup/s').hasMany(['h'])).toEqual([true]);
    await again.close();

    const old = JSON.parse(store.body ?? '{}') as Record<string, unknown>;
    delete old['binarySets'];
    store.body = JSON.stringify(old);
    const { c: before } = await open(store, clock);
    expect(before.binarySet?.('dedup/s').size()).toBe(0);
    await before.close();
  });

  it('refuses a backup whose binary set does not decode', async () => {
    const store = new MemoryBackupStore();
    store.body = JSON.stringify({
      version: 1,
      leases: [],
      tokens: [],
      members: [],
      sets: [],
      counters: [],
      binarySets: [['s', { keys: 'AAAA', expiresAt: [1], partitions: [0], offsets: [0] }]],
    });
    await expect(open(store)).rejects.toMatchObject({ code: 'TWG_COORDINATION_BACKUP_CORRUPT' });
  });
});
