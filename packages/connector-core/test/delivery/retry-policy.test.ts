import { describe, expect, it } from 'vitest';
import { backoffDelay, retrying } from '../../src/delivery/retry-policy.js';

const policy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 25 };
const noWait = () => Promise.resolve();

describe('retrying', () => {
  it('retries a transient failure up to maxAttempts, counting each retry', async () => {
    const retried: number[] = [];
    let calls = 0;
    const result = await retrying(
      policy,
      async (attempt) => {
        calls++;
        if (attempt < 3) throw new Error(`attempt ${attempt}`);
        return 'done';
      },
      { transient: () => true, onRetry: (_e, attempt) => retried.push(attempt), wait: noWait },
    );
    expect(result).toBe('done');
    expect(calls).toBe(3);
    expect(retried).toEqual([1, 2]);
  });

  it('throws the last failure as it was once maxAttempts attempts failed', async () => {
    let calls = 0;
    const last = retrying(
      policy,
      (attempt) => {
        calls++;
        return Promise.reject(new Error(`attempt ${attempt}`));
      },
      { transient: () => true, wait: noWait },
    );
    await expect(last).rejects.toThrow('attempt 3');
    expect(calls).toBe(3);
  });

  it('throws a failure that is not transient at once', async () => {
    let calls = 0;
    const fatal = retrying(
      policy,
      () => {
        calls++;
        return Promise.reject(new Error('fatal'));
      },
      { transient: (e) => !(e instanceof Error && e.message === 'fatal'), wait: noWait },
    );
    await expect(fatal).rejects.toThrow('fatal');
    expect(calls).toBe(1);
  });

  it('backs off within a doubling bound, capped', () => {
    for (let i = 0; i < 100; i++) {
      expect(backoffDelay(policy, 1)).toBeLessThanOrEqual(10);
      expect(backoffDelay(policy, 2)).toBeLessThanOrEqual(20);
      expect(backoffDelay(policy, 9)).toBeLessThanOrEqual(25);
    }
  });
});
