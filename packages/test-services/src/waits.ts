// How a test waits for something to happen: on a condition with a deadline and
// a named failure, never by sleeping and hoping. One mechanism for every test
// in the repository, so a wait that times out always says what it waited for.

/** How often and how long `waitFor` asks. */
export interface WaitOptions {
  /** The deadline, from the first check; 30 s unless told. */
  readonly timeoutMs?: number;
  /** The pause between two checks; 50 ms unless told. */
  readonly everyMs?: number;
}

function whatOf(what: string | (() => string)): string {
  return typeof what === 'string' ? what : what();
}

function timedOut(timeoutMs: number, what: string | (() => string)): Error {
  return new Error(`timed out after ${String(timeoutMs)} ms waiting for ${whatOf(what)}`);
}

/**
 * Waits until `check` holds, for state that lives in another process (a real
 * service such as Prometheus, the Pulsar admin API or PostgreSQL, or a child
 * process's HTTP endpoint) and so cannot be observed by an event: it asks
 * again every `everyMs` and throws `timed out after <timeoutMs> ms waiting for
 * <what>` once the deadline passes without a yes. The last check runs at the
 * deadline itself. A function `what` is asked only at the timeout, so it can
 * say where things stood (the last answer seen). An error thrown by `check`
 * ends the wait with that error.
 *
 * For state in this process, use {@link Changes}: it wakes on the change
 * instead of on a clock.
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  options: WaitOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const everyMs = options.everyMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    const left = deadline - Date.now();
    if (left <= 0) throw timedOut(timeoutMs, what);
    await new Promise((resolve) => setTimeout(resolve, Math.min(everyMs, left)));
  }
}

/**
 * Waits on state in this process, woken by the code that changes it: wherever
 * the awaited state moves (a handler records a message, a fake server stores
 * a frame), the test calls `poke()`, and every pending `until` checks its
 * condition right then. Nothing polls, so a wait ends on the change itself
 * and a test runs as fast as the code under test.
 */
export class Changes {
  private readonly waiters = new Set<() => void>();

  /** Says that something changed: every pending `until` checks its condition now. */
  poke(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * Resolves once `cond()` holds: checked at once, then on every `poke()`.
   * Rejects with `timed out after <timeoutMs> ms waiting for <what>` when no
   * poke made it hold within `timeoutMs`, or with the error `cond` threw. A
   * function `what` is asked only at the timeout, so it can say where things
   * stood.
   */
  until(cond: () => boolean, what: string | (() => string), timeoutMs = 10_000): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const settle = (outcome: () => void): void => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        outcome();
      };
      const waiter = (): void => {
        try {
          if (cond()) settle(resolve);
        } catch (error) {
          settle(() => {
            reject(error instanceof Error ? error : new Error(String(error)));
          });
        }
      };
      const timer = setTimeout(() => {
        settle(() => {
          reject(timedOut(timeoutMs, what));
        });
      }, timeoutMs);
      // A pending wait alone does not keep the process alive: the test that
      // awaits it does, and its own timeout is the last word.
      timer.unref();
      this.waiters.add(waiter);
    });
  }
}
