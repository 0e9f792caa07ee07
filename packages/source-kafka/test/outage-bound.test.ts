import { describe, expect, it } from 'vitest';
import { FailureRun, REAL_CLOCK, type OutagePolicy } from '../src/outage-bound.js';
import { VirtualOutageClock } from './virtual-outage-clock.js';

const POLICY: OutagePolicy = { baseDelayMs: 100, maxDelayMs: 5_000, giveUpAfterMs: 60_000 };

describe('FailureRun', () => {
  it('backs off, doubling up to the cap, and gives up once failures have lasted the bound', async () => {
    const clock = new VirtualOutageClock();
    const run = new FailureRun({ policy: POLICY, clock }, new AbortController().signal);
    let tries = 0;
    while (await run.failed()) tries += 1;
    // Given up only once a minute of failures had passed, and not a backoff later.
    expect(clock.time).toBeGreaterThanOrEqual(60_000);
    expect(clock.time - (clock.waits.at(-1) ?? 0)).toBeLessThan(60_000);
    expect(tries).toBe(clock.waits.length);
    clock.waits.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(Math.min(5_000, 100 * 2 ** i));
    });
  });

  it('starts a new run after a success, with the shortest backoff again', async () => {
    const clock = new VirtualOutageClock();
    const run = new FailureRun({ policy: POLICY, clock }, new AbortController().signal);
    for (let i = 0; i < 8; i++) await run.failed();
    clock.time += 59_000;
    run.succeeded();
    clock.waits.length = 0;
    // Jittered waits leave the time fractional, where (start + 60_000) - start
    // can come out a hair under 60_000: the new run starts on a whole millisecond.
    const start = Math.ceil(clock.time);
    clock.time = start;
    expect(await run.failed()).toBe(true);
    expect(clock.waits[0]).toBeLessThanOrEqual(100);
    clock.time = start + 59_999;
    expect(await run.failed()).toBe(true);
    clock.time = start + 60_000;
    expect(await run.failed()).toBe(false);
  });

  it('cuts a real backoff short when its signal aborts', async () => {
    const closing = new AbortController();
    const waited = REAL_CLOCK.wait(2 ** 30, closing.signal);
    closing.abort();
    await waited;
    await REAL_CLOCK.wait(2 ** 30, closing.signal);
  });
});
