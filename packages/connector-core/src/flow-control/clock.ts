/**
 * The only source of time a flow-control mechanism sees: milliseconds on a
 * monotonic timeline. Mechanisms never read a wall clock themselves, so a
 * test drives them with a manual clock and every hold, dwell and timeout is
 * reproducible to the millisecond.
 */
export interface Clock {
  now(): number;
}

/** Stops a scheduled piece of work; calling it again does nothing. */
export type Cancel = () => void;

/**
 * Where periodic and delayed work runs: the pipeline's flow-control cycle,
 * recovery's pause between passes, a lease's renewals. Work never calls
 * `setInterval` or `setTimeout` itself, so a test drives it with a
 * `ManualClock` and decides exactly when each cycle runs, instead of
 * sleeping and hoping the cycle ran.
 *
 * `work` may return a promise: a scheduler on real timers ignores it (the
 * work reports its own failures), a manual clock waits for it in `elapse`.
 */
export interface Scheduler {
  every(ms: number, work: () => unknown): Cancel;
  after(ms: number, work: () => unknown): Cancel;
}

/**
 * The process's monotonic clock. `performance.now()` rather than `Date.now()`
 * because an NTP step of the wall clock must not shorten a hold period or
 * fire a warm-up timeout early.
 */
export const monotonicClock: Clock = {
  now: () => performance.now(),
};

/**
 * Node's timers. Unref'd: a pending cycle or pause never keeps a process
 * alive on its own (the work it serves holds the process open).
 */
export const timerScheduler: Scheduler = {
  every(ms, work) {
    const timer = setInterval(work, ms);
    timer.unref();
    return () => {
      clearInterval(timer);
    };
  },
  after(ms, work) {
    const timer = setTimeout(work, ms);
    timer.unref();
    return () => {
      clearTimeout(timer);
    };
  },
};

/**
 * Node's timers, kept referenced: for a wait that may be the only thing
 * left between a process and the work it was started for (a source riding
 * out a broker outage has no socket open to hold the process).
 */
export const heldTimerScheduler: Scheduler = {
  every(ms, work) {
    const timer = setInterval(work, ms);
    return () => {
      clearInterval(timer);
    };
  },
  after(ms, work) {
    const timer = setTimeout(work, ms);
    return () => {
      clearTimeout(timer);
    };
  },
};

interface Timer {
  due: number;
  readonly every: number | null;
  readonly work: () => unknown;
}

/**
 * A clock that moves only when told to, and a scheduler on it: for tests and
 * simulations. Scheduled work runs only when `advance` or `elapse` passes its
 * due time, in due order.
 */
export class ManualClock implements Clock, Scheduler {
  private current: number;
  private timers: Timer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  every(ms: number, work: () => unknown): Cancel {
    if (!(ms > 0)) throw new RangeError(`periodic work needs a period above zero (every(${ms}))`);
    return this.schedule({ due: this.current + ms, every: ms, work });
  }

  after(ms: number, work: () => unknown): Cancel {
    return this.schedule({ due: this.current + Math.max(0, ms), every: null, work });
  }

  /** Work scheduled and not yet run or cancelled (periodic work counts once). */
  get scheduled(): number {
    return this.timers.length;
  }

  /** Moves time forward, running the work that falls due on the way; returns the new time. */
  advance(ms: number): number {
    this.run(ms);
    return this.current;
  }

  /**
   * Like `advance`, and waits for every promise the work returned: after
   * `await clock.elapse(ms)`, what each cycle started has finished.
   */
  async elapse(ms: number): Promise<void> {
    await Promise.all(this.run(ms));
  }

  /** Runs what falls due; the results of the work, for `elapse` to wait on. */
  private run(ms: number): unknown[] {
    if (!(ms >= 0)) throw new RangeError(`a manual clock only moves forward (advance(${ms}))`);
    const until = this.current + ms;
    const started: unknown[] = [];
    for (;;) {
      const next = this.timers.reduce<Timer | null>(
        (earliest, t) =>
          t.due <= until && (earliest === null || t.due < earliest.due) ? t : earliest,
        null,
      );
      if (next === null) break;
      this.current = next.due;
      if (next.every === null) this.remove(next);
      else next.due += next.every;
      started.push(next.work());
    }
    this.current = until;
    return started;
  }

  private schedule(timer: Timer): Cancel {
    this.timers.push(timer);
    return () => {
      this.remove(timer);
    };
  }

  private remove(timer: Timer): void {
    this.timers = this.timers.filter((t) => t !== timer);
  }
}
