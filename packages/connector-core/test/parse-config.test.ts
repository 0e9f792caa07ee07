import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../src/parse-config.js';
import { ConfigError } from '../src/errors.js';

const schema = z.object({
  budget: z.object({ bytes: z.number().int().positive() }),
  sinks: z.array(z.object({ id: z.string().min(1) })),
});

describe('parseConfig', () => {
  it('returns the parsed value', () => {
    expect(parseConfig(schema, { budget: { bytes: 1 }, sinks: [] })).toEqual({
      budget: { bytes: 1 },
      sinks: [],
    });
  });

  it('names the path of the first bad field and lists the others', () => {
    const run = () =>
      parseConfig(schema, { budget: { bytes: -5 }, sinks: [{ id: '' }] }, 'pipeline');
    expect(run).toThrow(ConfigError);
    try {
      run();
    } catch (e) {
      const err = e as ConfigError;
      expect(err.path).toBe('pipeline.budget.bytes');
      expect(err.message).toMatch(/pipeline\.budget\.bytes: .*also: pipeline\.sinks\[0\]\.id/);
    }
  });

  it('names an unknown key by its own path, each one', () => {
    const strict = z.strictObject({ a: z.strictObject({ b: z.number().optional() }) });
    try {
      parseConfig(strict, { a: { b: 1, bb: 2 }, c: 3 }, 'component');
      expect.unreachable('accepted unknown keys');
    } catch (e) {
      const err = e as ConfigError;
      expect(err.path).toBe('component.a.bb');
      expect(err.reason).toMatch(/unknown key.*also: component\.c: .*unknown key/);
    }
  });
});
