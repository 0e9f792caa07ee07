import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/** How a record's in-memory size is estimated from its size on the wire. */
export const expansionEstimatorConfigSchema = z
  .strictObject({
    /**
     * Expanded over wire size, assumed until enough samples exist, and the
     * floor of every estimate afterwards: a run of unusually small
     * expansions must not talk the budget into over-admitting.
     */
    seedRatio: z.number().gt(0).default(4),
    /** Samples needed before the observed percentile replaces the seed. */
    minSamples: z.number().int().positive().default(100),
    /** Most recent samples the percentile is taken over (allocated up front, hence the cap). */
    window: z
      .number()
      .int()
      .positive()
      .max(1 << 20)
      .default(1024),
    /** A high percentile rather than the mean: see the estimator. */
    percentile: z.number().gt(0).max(1).default(0.95),
    /** Samples between two recomputations of the percentile (a sort of the window). */
    refreshEvery: z.number().int().positive().default(64),
  })
  .superRefine((c, ctx) => {
    if (c.minSamples > c.window) {
      ctx.addIssue({
        code: 'custom',
        path: ['minSamples'],
        message: `must not exceed window (${c.window}): the window could never hold enough samples`,
      });
    }
  });

export type ExpansionEstimatorConfig = z.output<typeof expansionEstimatorConfigSchema>;
export type ExpansionEstimatorConfigInput = z.input<typeof expansionEstimatorConfigSchema>;

export function parseExpansionEstimatorConfig(
  input: unknown = {},
  path = 'expansion',
): ExpansionEstimatorConfig {
  return parseConfig(expansionEstimatorConfigSchema, input, path);
}
