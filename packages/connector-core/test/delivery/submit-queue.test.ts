import { fullGc } from '@thalweg/test-services';
import { describe, expect, it } from 'vitest';
import { SubmitQueue } from '../../src/delivery/submit-queue.js';
import { settled } from './helpers.js';

const item = (name: string, bytes = 1) => ({ name, bytes });
const names = (items: { name: string }[] | null) => items?.map((i) => i.name) ?? null;

describe('SubmitQueue', () => {
  it('admits in call order: a small push never overtakes a large one waiting for room', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 10, maxBytes: 100 });
    await q.push(item('a', 60));
    const big = q.push(item('big', 60));
    const small = q.push(item('small', 1));
    expect(await settled(small)).toBe(false);
    expect(q.offered).toBe(3);
    expect(names(await q.take(10, 1000))).toEqual(['a']);
    await Promise.all([big, small]);
    expect(names(await q.take(10, 1000))).toEqual(['big', 'small']);
    expect(q.admitted).toBe(3);
  });

  it('bounds by count as well as by bytes', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 2, maxBytes: 1000 });
    await q.push(item('a'));
    await q.push(item('b'));
    const third = q.push(item('c'));
    expect(await settled(third)).toBe(false);
    expect(names(await q.take(1))).toEqual(['a']);
    expect(await settled(third)).toBe(true);
    expect(q.size).toEqual({ items: 2, bytes: 2, waiting: 0 });
  });

  it('takes at most the burst bounds, and at least one item', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 10, maxBytes: 1000 });
    for (const [n, b] of [
      ['a', 50],
      ['b', 50],
      ['c', 50],
      ['d', 500],
    ] as const)
      await q.push(item(n, b));
    expect(names(await q.take(2, 1000))).toEqual(['a', 'b']);
    expect(names(await q.take(10, 100))).toEqual(['c']);
    expect(names(await q.take(10, 100))).toEqual(['d']);
  });

  it('admits an item larger than the byte bound alone into an empty queue', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 10, maxBytes: 10 });
    await q.push(item('huge', 50));
    const next = q.push(item('b'));
    expect(await settled(next)).toBe(false);
    expect(names(await q.take())).toEqual(['huge']);
    await next;
  });

  it("with countUntil 'released', a taken item counts until its taker releases it", async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({
      maxItems: 2,
      maxBytes: 100,
      countUntil: 'released',
    });
    await q.push(item('a', 40));
    await q.push(item('b', 40));
    expect(names(await q.take())).toEqual(['a', 'b']);
    expect(q.size).toEqual({ items: 2, bytes: 80, waiting: 0 });
    const next = q.push(item('c', 40));
    expect(await settled(next)).toBe(false);
    q.release(1, 40);
    await next;
    expect(q.size).toEqual({ items: 2, bytes: 80, waiting: 0 });
    expect(q.fill()).toBe(1);
  });

  it('offer admits only what fits now, and never ahead of a waiting push', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 2, maxBytes: 100 });
    expect(q.offer(item('a', 60))).toBe(true);
    expect(q.offer(item('too-big', 60))).toBe(false);
    expect(q.offer(item('b', 10))).toBe(true);
    expect(q.offer(item('c'))).toBe(false);
    expect(q.fill()).toBe(1);
    const waiting = q.push(item('w'));
    expect(names(await q.take(1))).toEqual(['a']);
    await waiting;
    expect(q.offer(item('d'))).toBe(false);
    q.end();
    expect(q.offer(item('e'))).toBe(false);
  });

  it('admits(bytes) answers what offer would, without admitting anything', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 2, maxBytes: 100 });
    expect(q.admits(500)).toBe(true); // alone into an empty queue
    expect(q.offer(item('a', 60))).toBe(true);
    expect(q.admits(60)).toBe(false);
    expect(q.admits(40)).toBe(true);
    expect(q.size.items).toBe(1);
    const waiting = q.push(item('w', 60));
    expect(q.admits(1)).toBe(false); // never ahead of a waiting push
    expect(names(await q.take(1))).toEqual(['a']);
    await waiting;
    q.end();
    expect(q.admits(1)).toBe(false);
  });

  it('lets go of a taken item while later ones stay queued (a lagging lane keeps no taken batch alive)', async () => {
    const gc = fullGc();
    const q = new SubmitQueue<{ name: string; bytes: number; payload?: Uint8Array }>({
      maxItems: 8,
      maxBytes: 1 << 30,
    });
    const taken = (() => {
      const big = { name: 'big', bytes: 1, payload: new Uint8Array(1 << 20) };
      q.offer(big);
      q.offer(item('next'));
      expect(names(q.takeReady(1))).toEqual(['big']);
      return new WeakRef(big);
    })();
    // A WeakRef's target is kept until the job that made it ends.
    await new Promise((r) => setImmediate(r));
    gc();
    expect(taken.deref()).toBeUndefined();
    expect(names(q.takeReady())).toEqual(['next']);
  });

  it('drains what is queued at once and lets waiting pushes in', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 1, maxBytes: 100 });
    await q.push(item('a'));
    const waiting = q.push(item('b'));
    expect(q.drain().map((i) => i.name)).toEqual(['a']);
    await waiting;
    expect(names(await q.take())).toEqual(['b']);
  });

  it('drains what was pushed before end, refuses pushes after it, then returns null', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 1, maxBytes: 100 });
    await q.push(item('a'));
    const waiting = q.push(item('b'));
    q.end();
    await expect(q.push(item('c'))).rejects.toMatchObject({ code: 'TWG_DELIVERY_ENDED' });
    expect(names(await q.take())).toEqual(['a']);
    await waiting;
    expect(names(await q.take())).toEqual(['b']);
    expect(await q.take()).toBeNull();
  });

  it('fails every waiting and later push, drops what is queued, and wakes a waiting taker', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 1, maxBytes: 100 });
    await q.push(item('a'));
    const waiting = q.push(item('b'));
    const boom = new Error('boom');
    q.fail(boom);
    await expect(waiting).rejects.toBe(boom);
    await expect(q.push(item('c'))).rejects.toBe(boom);
    expect(await q.take()).toBeNull();
    expect(q.size.items).toBe(0);

    const empty = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 1, maxBytes: 1 });
    const taken = empty.take();
    expect(await settled(taken)).toBe(false);
    empty.fail(boom);
    expect(await taken).toBeNull();
  });

  it('keeps order when taking one at a time from a long queue', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>({ maxItems: 5000, maxBytes: 1e9 });
    for (let i = 0; i < 3000; i++) expect(q.offer(item(String(i)))).toBe(true);
    const seen: string[] = [];
    for (let i = 0; i < 3000; i++) seen.push(...(names(await q.take(1)) ?? []));
    expect(seen).toEqual(Array.from({ length: 3000 }, (_, i) => String(i)));
    expect(q.size).toEqual({ items: 0, bytes: 0, waiting: 0 });
  });

  it('refuses bounds that cannot hold anything', () => {
    expect(() => new SubmitQueue({ maxItems: 0, maxBytes: 1 })).toThrow(/maxItems/);
    expect(() => new SubmitQueue({ maxItems: 1, maxBytes: 0 })).toThrow(/maxBytes/);
  });
});
