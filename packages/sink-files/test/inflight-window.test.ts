import { describe, expect, it } from 'vitest';
import { InflightWindow } from '../src/inflight-window.js';
import { settled } from './helpers.js';

describe('InflightWindow', () => {
  it('admits in call order, running each admission synchronously, until entries leave', async () => {
    const w = new InflightWindow(2, 100);
    const sent: string[] = [];
    await w.enter(10, () => sent.push('a'));
    await w.enter(10, () => sent.push('b'));
    const c = w.enter(10, () => sent.push('c'));
    const d = w.enter(1, () => sent.push('d'));
    expect(await settled(c)).toBe(false);
    expect(sent).toEqual(['a', 'b']);
    expect(w.size).toEqual({ items: 2, bytes: 20, waiting: 2 });
    w.leave(1, 10);
    expect(sent).toEqual(['a', 'b', 'c']);
    expect(await settled(d)).toBe(false);
    w.leave(2, 20);
    await Promise.all([c, d]);
    expect(sent).toEqual(['a', 'b', 'c', 'd']);
    expect(w.admitted).toBe(4);
  });

  it('bounds bytes, admitting an entry larger than the bound alone', async () => {
    const w = new InflightWindow(10, 50);
    await w.enter(40, () => undefined);
    const big = w.enter(500, () => undefined);
    expect(await settled(big)).toBe(false);
    w.leave(1, 40);
    await big;
    expect(w.size.bytes).toBe(500);
  });

  it('rejects waiting and later entries once failed, and an entry whose admission throws', async () => {
    const w = new InflightWindow(1, 100);
    await w.enter(1, () => undefined);
    const waiting = w.enter(1, () => undefined);
    const throwing = w.enter(1, () => {
      throw new Error('post failed');
    });
    w.leave(1, 1);
    await waiting;
    w.leave(1, 1);
    await expect(throwing).rejects.toThrow('post failed');
    expect(w.admitted).toBe(2);
    const blocked = w.enter(1, () => undefined);
    const next = w.enter(1, () => undefined);
    w.fail(new Error('writer died'));
    await blocked;
    await expect(next).rejects.toThrow('writer died');
    await expect(w.enter(1, () => undefined)).rejects.toThrow('writer died');
  });
});
