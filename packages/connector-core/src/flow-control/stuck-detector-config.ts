import { z } from 'zod';
import { parseConfig } from '../parse-config.js';
import { requireAbove } from './threshold-order.js';

const fraction = z.number().gt(0).lt(1);
const durationMs = z.number().int().min(0);

/**
 * When a pipeline counts as stuck. The escalation timings assume a batch write
 * completes within minutes; a pipeline whose sink routinely takes longer must
 * raise them (or shrink its batches), or a slow write reads as a deadlock.
 * Each escalation must come strictly after the one before it.
 */
export interface StuckDetectorConfigInput {
  /**
   * Memory at or above this share (0 to 1, exclusive) of the limit counts as high.
   * @defaultValue 0.8
   */
  highMemoryRatio?: number | undefined;
  /**
   * Channels whose fullest fill is below this (0 to 1, exclusive) count as empty.
   * @defaultValue 0.05
   */
  idleChannelFill?: number | undefined;
  /**
   * Stuck this long, in ms: warn.
   * @defaultValue 120000
   */
  warnAfterMs?: number | undefined;
  /**
   * Stuck this long, in ms: report unhealthy, so the orchestrator recycles
   * the process. Must be above `warnAfterMs`.
   * @defaultValue 300000
   */
  unhealthyAfterMs?: number | undefined;
  /**
   * Stuck this long, in ms: ask the embedder to exit. Must be above
   * `unhealthyAfterMs`.
   * @defaultValue 600000
   */
  exitAfterMs?: number | undefined;
  /**
   * Progress must hold, with no stuck sample, this long (ms) before an
   * escalation clears.
   * @defaultValue 60000
   */
  clearAfterMs?: number | undefined;
}

/**
 * The validator of {@link StuckDetectorConfigInput}; each key's meaning and
 * default are documented there (a type test proves the two agree).
 */
export const stuckDetectorConfigSchema = z
  .strictObject({
    highMemoryRatio: fraction.default(0.8),
    idleChannelFill: fraction.default(0.05),
    warnAfterMs: durationMs.default(120_000),
    unhealthyAfterMs: durationMs.default(300_000),
    exitAfterMs: durationMs.default(600_000),
    clearAfterMs: durationMs.default(60_000),
  })
  .superRefine((c, ctx) => {
    requireAbove(ctx, ['unhealthyAfterMs'], c.unhealthyAfterMs, 'warnAfterMs', c.warnAfterMs);
    requireAbove(ctx, ['exitAfterMs'], c.exitAfterMs, 'unhealthyAfterMs', c.unhealthyAfterMs);
  });

export type StuckDetectorConfig = z.output<typeof stuckDetectorConfigSchema>;

export function parseStuckDetectorConfig(
  input: unknown = {},
  path = 'stuckDetector',
): StuckDetectorConfig {
  return parseConfig(stuckDetectorConfigSchema, input, path);
}
