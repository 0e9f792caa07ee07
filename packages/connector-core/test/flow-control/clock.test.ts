import { describe, expect, it } from 'vitest';
import { ManualClock, monotonicClock } from '../../src/flow-control/clock.js';

describe('clocks', () => {
  it('a manual clock moves only forward, and only when told', () => {
    const c = new ManualClock(5);
    expect(c.now()).toBe(5);
    expect(c.advance(10)).toBe(15);
    expect(() => c.advance(-1)).toThrow(RangeError);
    expect(c.now()).toBe(15);
  });

  it('the monotonic clock never goes back', () => {
    const a = monotonicClock.now();
    expect(monotonicClock.now()).toBeGreaterThanOrEqual(a);
  });
});
