import { ManualClock, type Cancel, type Scheduler } from '@thalweg/connector-core';
import { DEFAULT_OUTAGE, type OutageHandling } from '../src/outage-bound.js';

/**
 * Outage handling on a `ManualClock` that moves itself to the end of each
 * backoff (after a turn of the event loop), noting each one: a consumer's
 * minute of backoffs runs in milliseconds, and a test reads how long each
 * was and where the clock stands.
 */
export class SelfAdvancingOutage implements OutageHandling {
  readonly policy = DEFAULT_OUTAGE;
  readonly clock = new ManualClock();
  readonly waits: number[] = [];
  readonly scheduler: Scheduler = {
    every: (ms, work) => this.clock.every(ms, work),
    after: (ms, work): Cancel => {
      this.waits.push(ms);
      const cancel = this.clock.after(ms, work);
      setImmediate(() => this.clock.advance(ms));
      return cancel;
    },
  };

  get time(): number {
    return this.clock.now();
  }
}
