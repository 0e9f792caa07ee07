import type { ManualClock } from '@thalweg/connector-core';

/** Waits until `check` holds, looking again after each turn of the event loop: a condition, never a duration. */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 1));
}

/** The harness's flow cycle (`evaluateEveryMs`). */
export const CYCLE_MS = 5;

/**
 * Runs `n` flow cycles on the manual clock and waits for what each started
 * (the commit, the coverage rounds) to finish: after it, whatever those
 * cycles would do is done, and nothing else has run.
 */
export async function cycles(clock: ManualClock, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await clock.elapse(CYCLE_MS);
}
