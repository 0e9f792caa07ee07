import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { functionOption, objectWith } from '../src/config-schemas.js';
import { parseConfig } from '../src/parse-config.js';
import { ConfigError } from '../src/errors.js';

const schema = z.strictObject({
  log: functionOption<(line: string) => void>().optional(),
  target: objectWith<{ apply(): void }>('apply'),
});

function refusal(input: unknown): ConfigError {
  try {
    parseConfig(schema, input, 'part');
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('option schemas for code values', () => {
  it('keeps the given function and object as they are', () => {
    const log = (): void => undefined;
    const target = { apply: (): void => undefined };
    const parsed = parseConfig(schema, { log, target }, 'part');
    expect(parsed.log).toBe(log);
    expect(parsed.target).toBe(target);
  });

  it('refuses a value of the wrong shape, naming the path', () => {
    expect(refusal({ log: 'console', target: { apply: () => undefined } })).toMatchObject({
      path: 'part.log',
      reason: 'must be a function',
    });
    expect(refusal({ target: { apply: 1 } })).toMatchObject({
      path: 'part.target',
      reason: 'must be an object with a method apply()',
    });
    expect(refusal({ target: null }).path).toBe('part.target');
  });
});
