import { heldTimerScheduler, ManualClock, monotonicClock } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { FailureRun, type OutagePolicy } from '../src/outage-bound.js';
import { SelfAdvancingOutage } from './self-advancing-outage.js';

const POLICY: OutagePolicy = { baseDelayMs: 100, maxDelayMs: 5_000, giveUpAfterMs: 60_000 };

describe('FailureRun', () => {
  it('backs off, doubling up to the cap, and gives up once failures have lasted the bound', async () => {
    const outage = new SelfAdvancingOutage();
    const run = new FailureRun(outage, new AbortController().signal);
    let tries = 0;
    while (await run.failed()) tries += 1;
    // Given up only once a minute of failures had passed, and not a backoff later.
    expect(outage.time).toBeGreaterThanOrEqual(60_000);
    expect(outage.time - (outage.waits.at(-1) ?? 0)).toBeLessThan(60_000);
    expect(tries).toBe(outage.waits.length);
    outage.waits.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(Math.min(5_000, 100 * 2 ** i));
    });
  });

  it('starts a new run after a success, with the shortest backoff again', async () => {
    const clock = new ManualClock();
    const waits: number[] = [];
    const scheduler = {
      every: clock.every.bind(clock),
      after: (ms: number, work: () => unknown) => {
        waits.push(ms);
        // Each backoff ends at once, without moving the clock: the test sets the time.
        return clock.after(0, work);
      },
    };
    const run = new FailureRun({ policy: POLICY, clock, scheduler }, new AbortController().signal);
    const failed = async () => {
      const retry = run.failed();
      clock.advance(0);
      return retry;
    };
    for (let i = 0; i < 8; i++) expect(await failed()).toBe(true);
    clock.advance(59_000);
    run.succeeded();
    waits.length = 0;
    expect(await failed()).toBe(true);
    expect(waits[0]).toBeLessThanOrEqual(100);
    clock.advance(59_999);
    expect(await failed()).toBe(true);
    clock.advance(1);
    expect(await failed()).toBe(false);
  });

  it('cuts a backoff on the real timers short when its signal aborts', async () => {
    const closing = new AbortController();
    const real = { policy: { ...POLICY, baseDelayMs: 2 ** 30, maxDelayMs: 2 ** 30 } };
    const run = new FailureRun(
      { ...real, clock: monotonicClock, scheduler: heldTimerScheduler },
      closing.signal,
    );
    const first = run.failed();
    closing.abort();
    // Jitter may draw a short backoff; an aborted signal ends a long one at once too.
    expect(await first).toBe(true);
    expect(await run.failed()).toBe(true);
  });
});
