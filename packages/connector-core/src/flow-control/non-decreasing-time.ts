import { assertNow } from './flow-control-errors.js';

/**
 * The time a detector reasons with: a clock reading that must be finite and
 * is never allowed to step back, so a clock adjustment cannot shorten a hold,
 * a dwell or a sustained spell. Each detector owns one.
 */
export class NonDecreasingTime {
  private last: number;

  /** `start`, when given, must itself be a finite reading. */
  constructor(start?: number) {
    if (start !== undefined) assertNow(start);
    this.last = start ?? Number.NEGATIVE_INFINITY;
  }

  /** Refuses a non-finite `now`; returns `now`, or the latest earlier reading if `now` went back. */
  advance(now: number): number {
    assertNow(now);
    if (now > this.last) this.last = now;
    return this.last;
  }
}
