import { describe, expect, it } from 'vitest';
import { BatchQueue } from '../src/batch-queue.js';
import { settled } from './helpers.js';

describe('BatchQueue', () => {
  it('makes push wait while full and admits waiting pushes in call order', async () => {
    const q = new BatchQueue<number>(2);
    await q.push(1);
    await q.push(2);
    const third = q.push(3);
    const fourth = q.push(4);
    expect(await settled(third)).toBe(false);
    expect(await q.take(1)).toEqual([1]);
    expect(await settled(third)).toBe(true);
    expect(await settled(fourth)).toBe(false);
    expect(await q.take(10)).toEqual([2, 3]);
    await fourth;
    expect(await q.take(10)).toEqual([4]);
  });

  it('keeps a new push behind waiting ones even when a slot is free', async () => {
    const q = new BatchQueue<number>(1);
    await q.push(1);
    const second = q.push(2);
    expect(await q.take(1)).toEqual([1]);
    // 2 was admitted by take; 3 queues behind it, never ahead.
    const third = q.push(3);
    await second;
    expect(await q.take(5)).toEqual([2]);
    await third;
    expect(await q.take(5)).toEqual([3]);
  });

  it('drains what was pushed after end, then returns null', async () => {
    const q = new BatchQueue<number>(1);
    await q.push(1);
    const waiting = q.push(2);
    q.end();
    await expect(q.push(3)).rejects.toThrow(/ended/);
    expect(await q.take(5)).toEqual([1]);
    await waiting;
    expect(await q.take(5)).toEqual([2]);
    expect(await q.take(5)).toBeNull();
  });

  it('fails waiting and later pushes with the reason and drops what is queued', async () => {
    const q = new BatchQueue<number>(1);
    await q.push(1);
    const waiting = q.push(2);
    const reason = new Error('sink failed');
    q.fail(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(q.push(3)).rejects.toBe(reason);
    expect(await q.take(5)).toBeNull();
    expect(q.size).toBe(0);
  });

  it('returns null to a taker waiting on an empty queue when it fails', async () => {
    const q = new BatchQueue<number>(1);
    const taken = q.take(1);
    q.fail(new Error('sink failed'));
    expect(await taken).toBeNull();
  });

  it('wakes a waiting taker when an item arrives', async () => {
    const q = new BatchQueue<number>(4);
    const taken = q.take(4);
    expect(await settled(taken)).toBe(false);
    await q.push(7);
    expect(await taken).toEqual([7]);
  });
});
