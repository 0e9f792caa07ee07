/** How a failed segment write is retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included (>= 1). */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Full-jitter exponential backoff: before attempt 2 wait up to base, doubling to the cap. */
export function backoffDelay(policy: RetryPolicy, failedAttempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.random() * cap;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
