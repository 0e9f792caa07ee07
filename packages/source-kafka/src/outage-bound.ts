import {
  backoffDelay,
  heldTimerScheduler,
  monotonicClock,
  pause,
  type BackoffPolicy,
  type Clock,
  type Scheduler,
} from '@thalweg/connector-core';

/**
 * How the @platformatic/kafka adapter rides out a broker it cannot reach:
 * a failed fetch round (or offset listing) is tried again after a backoff,
 * and the consumer fails only once tries have kept failing for
 * `giveUpAfterMs`, so a broker restart or a leader moving costs a pause,
 * not the source.
 */
export interface OutagePolicy extends BackoffPolicy {
  readonly giveUpAfterMs: number;
}

/**
 * 100 ms doubling to 5 s, for a minute: a rolling restart of a broker fits,
 * and a cluster gone for good is reported within about a minute. (kafkajs
 * restarts its consumer by itself and never gives up.)
 */
export const DEFAULT_OUTAGE: OutagePolicy = {
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  giveUpAfterMs: 60_000,
};

/** How a consumer retries what failed, and the time it measures and waits on (tests drive a `ManualClock`). */
export interface OutageHandling {
  readonly policy: OutagePolicy;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
}

/**
 * The real outage handling. Its timers are held: during an outage the
 * backoff may be all that keeps the process alive.
 */
export const REAL_OUTAGE: OutageHandling = {
  policy: DEFAULT_OUTAGE,
  clock: monotonicClock,
  scheduler: heldTimerScheduler,
};

/**
 * A run of failures in a row, and whether it has lasted too long. One per
 * loop that retries (the fetch loop, a join's positioning).
 */
export class FailureRun {
  readonly #outage: OutageHandling;
  readonly #cut: AbortSignal;
  #since: number | null = null;
  #count = 0;

  constructor(outage: OutageHandling, cut: AbortSignal) {
    this.#outage = outage;
    this.#cut = cut;
  }

  /**
   * Counts a failure. Resolves true after the backoff (cut short when the
   * signal aborts: a consumer closing does not wait it out) when it may be
   * tried again, false at once when failures have lasted `giveUpAfterMs`.
   */
  async failed(): Promise<boolean> {
    const { policy, clock, scheduler } = this.#outage;
    const now = clock.now();
    this.#since ??= now;
    this.#count += 1;
    if (now - this.#since >= policy.giveUpAfterMs) return false;
    await pause(scheduler, backoffDelay(policy, this.#count), this.#cut);
    return true;
  }

  succeeded(): void {
    this.#since = null;
    this.#count = 0;
  }
}
