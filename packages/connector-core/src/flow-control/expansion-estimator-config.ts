import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/** How a record's in-memory size is estimated from its size on the wire. */
export interface ExpansionEstimatorConfigInput {
  /**
   * Expanded over wire size, assumed until enough samples exist. Meant to
   * be conservative: a cold process against a deep backlog is where an
   * under-estimate costs memory. Must not be below `floorRatio`.
   * @defaultValue 2
   */
  seedRatio?: number | undefined;
  /**
   * The least the observed ratio may fall to: a run of unusually small
   * expansions must not talk the budget into over-admitting. 1 means a
   * record never costs less than its own bytes.
   * @defaultValue 1
   */
  floorRatio?: number | undefined;
  /**
   * Samples needed before the observed percentile replaces the seed. Must
   * not exceed `window`.
   * @defaultValue 100
   */
  minSamples?: number | undefined;
  /**
   * Most recent samples the percentile is taken over (allocated up front,
   * hence the cap of 1048576).
   * @defaultValue 1024
   */
  window?: number | undefined;
  /**
   * The percentile (above 0, at most 1) of the window taken as the ratio: a
   * high percentile rather than the mean, since an under-estimate costs
   * memory.
   * @defaultValue 0.95
   */
  percentile?: number | undefined;
  /**
   * Samples between two recomputations of the percentile (a sort of the window).
   * @defaultValue 64
   */
  refreshEvery?: number | undefined;
}

/**
 * The validator of {@link ExpansionEstimatorConfigInput}; each key's meaning
 * and default are documented there (a type test proves the two agree).
 */
export const expansionEstimatorConfigSchema = z
  .strictObject({
    seedRatio: z.number().gt(0).default(2),
    floorRatio: z.number().gt(0).default(1),
    minSamples: z.number().int().positive().default(100),
    window: z
      .number()
      .int()
      .positive()
      .max(1 << 20)
      .default(1024),
    percentile: z.number().gt(0).max(1).default(0.95),
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

export function parseExpansionEstimatorConfig(
  input: unknown = {},
  path = 'expansion',
): ExpansionEstimatorConfig {
  return parseConfig(expansionEstimatorConfigSchema, input, path);
}
