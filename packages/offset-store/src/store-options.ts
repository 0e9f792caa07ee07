import { isSinkId, type SinkId } from '@thalweg/connector-core';
import { z } from 'zod';

/**
 * Schemas shared by the options of every store, so each refuses the same
 * mistakes with the same words. The options of a store are parsed once, when
 * it is built or opened, by `parseConfig` (connector-core), under the store's
 * root name (ADR 0015): `levelDbCoverage.sinks[1]`, `s3Leases.retry.maxAttempts`.
 */

/** Node timers overflow above 2^31 - 1 ms (they fire after 1 ms instead). */
export const MAX_TIMER_MS = 0x7fffffff;

/**
 * The sinks a coverage store keeps coverage for, each listed once. None is
 * allowed: such a store holds cursors only (what `thalweg cursor` opens),
 * and refuses every coverage write, which Pipeline.open checks (`knows`).
 */
export const sinkList = z
  .array(z.custom<SinkId>(isSinkId, 'is not a sink id (use sinkId())'), {
    error: 'must be an array of sink ids',
  })
  .superRefine((sinks, ctx) => {
    const seen = new Set<SinkId>();
    sinks.forEach((sink, i) => {
      if (seen.has(sink)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `"${sink}" is listed twice` });
      }
      seen.add(sink);
    });
  });

/** A PostgreSQL schema name: quoted into SQL, so a lower-case identifier only. */
export const sqlSchemaName = z
  .string({ error: 'must be a lower-case SQL identifier' })
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
  .default('public');

/** Something pg's pool methods can be called on (checked by shape, like every seam). */
export function isPool(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Record<string, unknown>)['connect'] === 'function' &&
    typeof (v as Record<string, unknown>)['query'] === 'function'
  );
}

export const nonEmptyText = (what: string) =>
  z.string({ error: `must be ${what}` }).min(1, `must be ${what}`);

/** A whole number in [min, max], with one message for every way to miss it. */
export const intIn = (min: number, max: number, what = 'an integer') => {
  const reason = `must be ${what} in [${min}, ${max}]`;
  return z
    .number({ error: reason })
    .int({ error: reason })
    .min(min, { error: reason })
    .max(max, { error: reason });
};

/** A count of attempts: a whole number of at least 1. */
export const attempts = () => {
  const reason = 'must be a whole number of at least 1';
  return z
    .number({ error: reason })
    .int({ error: reason })
    .min(1, { error: reason })
    .max(Number.MAX_SAFE_INTEGER, { error: reason });
};
