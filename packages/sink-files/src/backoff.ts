import type { BackoffPolicy } from '@thalweg/connector-core';

export { backoffDelay, sleep } from '@thalweg/connector-core';

/** How a failed segment write is retried. */
export interface RetryPolicy extends BackoffPolicy {
  /** Attempts in all, the first included (>= 1). */
  readonly attempts: number;
}
