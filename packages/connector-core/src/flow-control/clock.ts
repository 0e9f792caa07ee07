/**
 * The only source of time a flow-control mechanism sees: milliseconds on a
 * monotonic timeline. Mechanisms never read a wall clock themselves, so a
 * test drives them with a manual clock and every hold, dwell and timeout is
 * reproducible to the millisecond.
 */
export interface Clock {
  now(): number;
}

/**
 * The process's monotonic clock. `performance.now()` rather than `Date.now()`
 * because an NTP step of the wall clock must not shorten a hold period or
 * fire a warm-up timeout early.
 */
export const monotonicClock: Clock = {
  now: () => performance.now(),
};

/** A clock that moves only when told to: for tests and simulations. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`a manual clock only moves forward (advance(${ms}))`);
    this.current += ms;
    return this.current;
  }
}
