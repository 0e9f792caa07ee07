import { describe, expect, it } from 'vitest';
import { SubmitQueue } from '../src/submit-queue.js';
import { settled } from './helpers.js';

const item = (name: string, bytes: number) => ({ name, bytes });

describe('SubmitQueue', () => {
  it('admits in call order: a small push never overtakes a large one waiting for room', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>(10, 100);
    await q.push(item('a', 60));
    const big = q.push(item('big', 60));
    const small = q.push(item('small', 1));
    expect(await settled(small)).toBe(false);
    expect((await q.take(10, 1000))?.map((i) => i.name)).toEqual(['a']);
    await Promise.all([big, small]);
    expect((await q.take(10, 1000))?.map((i) => i.name)).toEqual(['big', 'small']);
    expect(q.admitted).toBe(3);
  });

  it('takes at most the segment bounds, and at least one item', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>(10, 1000);
    for (const [n, b] of [
      ['a', 50],
      ['b', 50],
      ['c', 50],
      ['d', 500],
    ] as const)
      await q.push(item(n, b));
    expect((await q.take(2, 1000))?.map((i) => i.name)).toEqual(['a', 'b']);
    expect((await q.take(10, 100))?.map((i) => i.name)).toEqual(['c']);
    expect((await q.take(10, 100))?.map((i) => i.name)).toEqual(['d']);
  });

  it('ends after draining, and fails every waiting and later push', async () => {
    const q = new SubmitQueue<{ name: string; bytes: number }>(1, 100);
    await q.push(item('a', 1));
    q.end();
    expect((await q.take(10, 100))?.map((i) => i.name)).toEqual(['a']);
    expect(await q.take(10, 100)).toBeNull();

    const f = new SubmitQueue<{ name: string; bytes: number }>(1, 100);
    await f.push(item('a', 1));
    const waiting = f.push(item('b', 1));
    const boom = new Error('boom');
    f.fail(boom);
    await expect(waiting).rejects.toBe(boom);
    await expect(f.push(item('c', 1))).rejects.toBe(boom);
    expect(await f.take(10, 100)).toBeNull();
  });
});
