/** The delays of a retry: full jitter, doubling from `baseDelayMs` up to `maxDelayMs`. */
export interface BackoffPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
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
