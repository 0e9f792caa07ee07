import { ConfigError } from '@thalweg/connector-core';

/**
 * The ConfigError a constructor throws or an `open` rejects with; anything
 * else (success included) fails the test.
 */
export async function refusal(run: () => unknown): Promise<ConfigError> {
  let outcome: unknown;
  try {
    outcome = await run();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`expected a ConfigError, got ${String(outcome)}`);
}
