/** How long to wait between attempts of a transaction that failed transiently. */
export interface RetryPolicy {
  /** Attempts per transaction, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Full-jitter exponential backoff: attempt 1 waits up to base, doubling to
 * the cap. Jitter keeps sinks that lost the same server from reconnecting
 * in lockstep.
 */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.random() * cap;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
