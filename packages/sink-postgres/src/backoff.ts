import type { BackoffPolicy } from '@thalweg/connector-core';

export { backoffDelay, sleep } from '@thalweg/connector-core';

/** How long to wait between attempts of a transaction that failed transiently. */
export interface RetryPolicy extends BackoffPolicy {
  /** Attempts per transaction, the first included. */
  readonly maxAttempts: number;
}
