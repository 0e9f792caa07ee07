import { describe, expect, it } from 'vitest';
import { Histogram } from '../../src/metrics/histogram.js';
import { Counter } from '../../src/metrics/counter.js';

describe('Histogram', () => {
  it('counts into cumulative buckets and tracks sum, count and max', () => {
    const h = new Histogram([1, 10, 100]);
    for (const v of [0.5, 5, 5, 50, 500]) h.observe(v);
    expect(h.count).toBe(5);
    expect(h.sum).toBe(560.5);
    expect(h.max).toBe(500);
    expect(h.buckets()).toEqual([
      { le: 1, count: 1 },
      { le: 10, count: 3 },
      { le: 100, count: 4 },
      { le: Number.POSITIVE_INFINITY, count: 5 },
    ]);
  });

  it('estimates quantiles within the bucket that holds them', () => {
    const h = Histogram.exponential(64);
    for (let i = 0; i < 100; i++) h.observe(16);
    const p50 = h.quantile(0.5)!;
    expect(p50).toBeGreaterThan(8);
    expect(p50).toBeLessThanOrEqual(16);
    expect(new Histogram([1]).quantile(0.5)).toBeNull();
  });

  it('keeps an estimate within what was observed: one batch per ack is a ratio of 1, never 0.5', () => {
    const one = Histogram.exponential(64);
    one.observe(1);
    expect(one.quantile(0.5)).toBe(1);
    const h = Histogram.exponential(64);
    for (const v of [5, 6, 7]) h.observe(v);
    expect(h.quantile(0)).toBe(5);
    expect(h.quantile(1)).toBe(7);
  });

  it('refuses bounds that do not ascend, and counters that go down', () => {
    expect(() => new Histogram([2, 1])).toThrow(/ascending/);
    expect(() => new Counter().inc(-1)).toThrow(/only goes up/);
  });
});
