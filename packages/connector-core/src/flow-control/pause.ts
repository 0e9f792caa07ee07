import type { Scheduler } from './clock.js';

/**
 * Waits `ms` on `scheduler`, or less if any of `signals` aborts (at once if
 * one already has): a stop, or a wake-up, must never wait out a whole
 * interval.
 */
export function pause(
  scheduler: Scheduler,
  ms: number,
  ...signals: readonly AbortSignal[]
): Promise<void> {
  return new Promise((resolve) => {
    // An abort during the work before this pause has already fired: its
    // listener would never run, and stop() would wait out the interval.
    if (signals.some((s) => s.aborted)) {
      resolve();
      return;
    }
    const cancel = scheduler.after(ms, done);
    function done(): void {
      cancel();
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    }
    for (const s of signals) s.addEventListener('abort', done, { once: true });
  });
}
