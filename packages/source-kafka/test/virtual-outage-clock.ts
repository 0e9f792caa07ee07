import type { OutageClock } from '../src/outage-bound.js';

/**
 * An outage clock whose waits move its time on at once (after a turn of
 * the event loop), noting each wait: a minute of backoffs runs in
 * milliseconds.
 */
export class VirtualOutageClock implements OutageClock {
  time = 0;
  readonly waits: number[] = [];

  readonly now = (): number => this.time;

  readonly wait = async (ms: number): Promise<void> => {
    this.waits.push(ms);
    this.time += ms;
    await new Promise((resolve) => setImmediate(resolve));
  };
}
