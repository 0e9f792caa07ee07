import { describe, expect, it } from 'vitest';
import { ManualClock, monotonicClock, timerScheduler } from '../../src/flow-control/clock.js';

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

describe('the manual clock as a scheduler', () => {
  it('runs work only when time passes its due time, in due order, at its due time', () => {
    const c = new ManualClock();
    const ran: string[] = [];
    c.every(10, () => ran.push(`tick@${c.now()}`));
    c.after(15, () => ran.push(`once@${c.now()}`));
    c.advance(9);
    expect(ran).toEqual([]);
    c.advance(26);
    expect(ran).toEqual(['tick@10', 'once@15', 'tick@20', 'tick@30']);
    expect(c.now()).toBe(35);
    expect(c.scheduled).toBe(1);
  });

  it('cancelled work never runs, and cancelling twice is harmless', () => {
    const c = new ManualClock();
    let runs = 0;
    const stop = c.every(5, () => (runs += 1));
    const never = c.after(5, () => (runs += 100));
    never();
    c.advance(5);
    stop();
    stop();
    c.advance(50);
    expect(runs).toBe(1);
    expect(c.scheduled).toBe(0);
  });

  it('elapse waits for the promises the work returned', async () => {
    const c = new ManualClock();
    let finished = false;
    c.every(5, async () => {
      await Promise.resolve();
      await Promise.resolve();
      finished = true;
    });
    await c.elapse(5);
    expect(finished).toBe(true);
  });

  it('refuses a period of zero, which would never let time pass', () => {
    expect(() => new ManualClock().every(0, () => undefined)).toThrow(RangeError);
  });
});

describe('the timer scheduler', () => {
  it('runs periodic work until cancelled', async () => {
    let runs = 0;
    let reached: () => void = () => undefined;
    const third = new Promise<void>((r) => (reached = r));
    const stop = timerScheduler.every(1, () => {
      runs += 1;
      if (runs === 3) reached();
    });
    await third;
    stop();
    expect(runs).toBeGreaterThanOrEqual(3);
  });

  it('runs delayed work once, and not at all once cancelled', async () => {
    const order: string[] = [];
    const cancelled = timerScheduler.after(1, () => order.push('cancelled'));
    cancelled();
    await new Promise<void>((r) => timerScheduler.after(2, () => r(void order.push('ran'))));
    expect(order).toEqual(['ran']);
  });
});
