/** The delays of a retry: full jitter, doubling from `baseDelayMs` up to `maxDelayMs`. */
export interface BackoffPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * How an operation that failed transiently is tried again: the one retry
 * policy of every sink. `maxAttempts` counts every attempt, the first
 * included, so 1 means "never retry".
 */
export interface RetryPolicy extends BackoffPolicy {
  readonly maxAttempts: number;
}

/**
 * Full-jitter exponential backoff: after failed attempt 1, wait up to base;
 * the bound doubles per attempt up to the cap. Jitter keeps sinks that lost
 * the same server from retrying in lockstep.
 */
export function backoffDelay(policy: BackoffPolicy, failedAttempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.random() * cap;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface RetryHooks {
  /** Whether a failure may be retried in place; anything else is thrown at once. */
  readonly transient: (error: unknown, attempt: number) => boolean;
  /** A failed attempt that will be retried, before the backoff (a counter, a report). */
  readonly onRetry?: (error: unknown, attempt: number) => void;
  /** Injected by tests; `sleep` otherwise. */
  readonly wait?: (ms: number) => Promise<void>;
}

/**
 * Runs `work(attempt)` until it succeeds, a failure is not transient, or
 * `policy.maxAttempts` attempts failed; then throws the last failure as it
 * was. `work` learns its attempt number, so the caller can name it in the
 * error it raises.
 */
export async function retrying<T>(
  policy: RetryPolicy,
  work: (attempt: number) => Promise<T>,
  hooks: RetryHooks,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      if (attempt >= policy.maxAttempts || !hooks.transient(error, attempt)) throw error;
      hooks.onRetry?.(error, attempt);
      await (hooks.wait ?? sleep)(backoffDelay(policy, attempt));
    }
  }
}
