import { describe, expect, it } from 'vitest';
import { coordination, ManualScheduler } from '../src/index.js';
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
});
