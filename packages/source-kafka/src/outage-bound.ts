import { backoffDelay, type BackoffPolicy } from '@thalweg/connector-core';

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

/** Where the outage's time comes from; tests drive it. */
export interface OutageClock {
  readonly now: () => number;
  /** Resolves after `ms`, or as soon as `cut` aborts (a consumer closing does not wait out a backoff). */
  readonly wait: (ms: number, cut: AbortSignal) => Promise<void>;
}

export const REAL_CLOCK: OutageClock = {
  now: () => performance.now(),
  wait: (ms, cut) =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        cut.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (cut.aborted) done();
      else cut.addEventListener('abort', done, { once: true });
    }),
};

/** How a consumer retries what failed, and the clock it waits on. */
export interface OutageHandling {
  readonly policy: OutagePolicy;
  readonly clock: OutageClock;
}

/**
 * A run of failures in a row, and whether it has lasted too long. One per
 * loop that retries (the fetch loop, a join's positioning).
 */
export class FailureRun {
  readonly #policy: OutagePolicy;
  readonly #clock: OutageClock;
  readonly #cut: AbortSignal;
  #since: number | null = null;
  #count = 0;

  constructor({ policy, clock }: OutageHandling, cut: AbortSignal) {
    this.#policy = policy;
    this.#clock = clock;
    this.#cut = cut;
  }

  /**
   * Counts a failure. Resolves true after the backoff (cut short when the
   * signal aborts) when it may be tried again, false at once when failures
   * have lasted `giveUpAfterMs`.
   */
  async failed(): Promise<boolean> {
    const now = this.#clock.now();
    this.#since ??= now;
    this.#count += 1;
    if (now - this.#since >= this.#policy.giveUpAfterMs) return false;
    await this.#clock.wait(backoffDelay(this.#policy, this.#count), this.#cut);
    return true;
  }

  succeeded(): void {
    this.#since = null;
    this.#count = 0;
  }
}
