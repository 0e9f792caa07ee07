import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/flow-control/clock.js';
import { pause } from '../../src/flow-control/pause.js';

describe('pause', () => {
  it('ends when its time has passed on the scheduler, not before', async () => {
    const clock = new ManualClock();
    let done = false;
    const paused = pause(clock, 100).then(() => (done = true));
    clock.advance(99);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await paused;
    expect(done).toBe(true);
    expect(clock.scheduled).toBe(0);
  });

  it('ends early when any of its signals aborts, and cancels its timer', async () => {
    const clock = new ManualClock();
    const stop = new AbortController();
    const wake = new AbortController();
    const paused = pause(clock, 60_000, stop.signal, wake.signal);
    expect(clock.scheduled).toBe(1);
    wake.abort();
    await paused;
    expect(clock.scheduled).toBe(0);
    expect(clock.now()).toBe(0);
  });

  it('does not wait at all on a signal that aborted before it began', async () => {
    const clock = new ManualClock();
    const stop = new AbortController();
    stop.abort();
    await pause(clock, 60_000, stop.signal);
    expect(clock.scheduled).toBe(0);
  });
});
