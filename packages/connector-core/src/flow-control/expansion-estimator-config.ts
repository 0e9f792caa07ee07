import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/** How a record's in-memory size is estimated from its size on the wire. */
export const expansionEstimatorConfigSchema = z
  .strictObject({
    /**
     * Expanded over wire size, assumed until enough samples exist. Meant to
     * be conservative: a cold process against a deep backlog is where an
     * under-estimate costs memory.
     */
    seedRatio: z.number().gt(0).default(2),
    /**
     * The least the observed ratio may fall to: a run of unusually small
     * expansions must not talk the budget into over-admitting. 1 means a
     * record never costs less than its own bytes.
     */
    floorRatio: z.number().gt(0).default(1),
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
    if (c.seedRatio < c.floorRatio) {
      ctx.addIssue({
        code: 'custom',
        path: ['seedRatio'],
        message: `must not be below floorRatio (${c.floorRatio}): the cold start would under-reserve`,
      });
    }
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
