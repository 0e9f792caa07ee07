import { z } from 'zod';
import { parseConfig } from '../parse-config.js';
import { requireAbove } from './threshold-order.js';

const fraction = z.number().gt(0).lt(1);
const durationMs = z.number().int().min(0);

/**
 * When a pipeline counts as stuck. The escalation timings assume a batch write
 * completes within minutes; a pipeline whose sink routinely takes longer must
 * raise them (or shrink its batches), or a slow write reads as a deadlock.
 */
export const stuckDetectorConfigSchema = z
  .strictObject({
    /** Memory at or above this share of the limit counts as high. */
    highMemoryRatio: fraction.default(0.8),
    /** Channels whose fullest fill is below this count as empty. */
    idleChannelFill: fraction.default(0.05),
    /** Stuck this long: warn. */
    warnAfterMs: durationMs.default(120_000),
    /** Stuck this long: report unhealthy, so the orchestrator recycles the process. */
    unhealthyAfterMs: durationMs.default(300_000),
    /** Stuck this long: ask the embedder to exit. */
    exitAfterMs: durationMs.default(600_000),
    /** Progress must hold, with no stuck sample, this long before an escalation clears. */
    clearAfterMs: durationMs.default(60_000),
  })
  .superRefine((c, ctx) => {
    requireAbove(ctx, ['unhealthyAfterMs'], c.unhealthyAfterMs, 'warnAfterMs', c.warnAfterMs);
    requireAbove(ctx, ['exitAfterMs'], c.exitAfterMs, 'unhealthyAfterMs', c.unhealthyAfterMs);
  });

export type StuckDetectorConfig = z.output<typeof stuckDetectorConfigSchema>;
export type StuckDetectorConfigInput = z.input<typeof stuckDetectorConfigSchema>;

export function parseStuckDetectorConfig(
  input: unknown = {},
  path = 'stuckDetector',
): StuckDetectorConfig {
  return parseConfig(stuckDetectorConfigSchema, input, path);
}
