import { z } from 'zod';
import { parseConfig } from '../parse-config.js';
import { requireAbove } from './threshold-order.js';

const fraction = z.number().gt(0).lt(1);
const factor = z.number().gt(0).max(1);
const durationMs = z.number().int().min(0);

/**
 * Thresholds and timings of the backpressure state machine. The defaults are
 * the operating points a production predecessor settled on; every one of
 * them is workload-tunable.
 */
export const backpressureConfigSchema = z
  .strictObject({
    memory: z
      .strictObject({
        /** At or above this share of the memory limit, the pipeline is degraded. */
        degradedRatio: fraction.default(0.8),
        /** Above this share, it is critical and the source pauses. */
        criticalRatio: fraction.default(0.9),
      })
      .prefault({}),
    channels: z
      .strictObject({
        /** Fill of the fullest bounded channel at or above which the pipeline is degraded. */
        degradedFill: fraction.default(0.7),
        /** Fill above which it is critical. */
        criticalFill: fraction.default(0.9),
      })
      .prefault({}),
    workingSet: z
      .strictObject({
        /**
         * Below this fill on every channel, high memory is read as allocator
         * fragmentation (nothing is queued to account for it), not pressure.
         */
        idleChannelFill: fraction.default(0.05),
      })
      .prefault({}),
    writeFailures: z
      .strictObject({
        /** Consecutive failed writes that degrade the pipeline. */
        degradedAfter: z.number().int().min(1).default(1),
      })
      .prefault({}),
    /** How long conditions must stay clear before Recovery is entered. */
    holdMs: durationMs.default(30_000),
    /** How long Recovery lasts, at its reduced batch size, before Normal. */
    recoveryDwellMs: durationMs.default(60_000),
    batchFactor: z
      .strictObject({
        normal: factor.default(1),
        degraded: factor.default(0.5),
        critical: factor.default(0.25),
        recovery: factor.default(0.75),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    const above = (path: string[], value: number, floorPath: string, floor: number) => {
      requireAbove(ctx, path, value, floorPath, floor);
    };
    above(
      ['memory', 'criticalRatio'],
      c.memory.criticalRatio,
      'memory.degradedRatio',
      c.memory.degradedRatio,
    );
    above(
      ['channels', 'criticalFill'],
      c.channels.criticalFill,
      'channels.degradedFill',
      c.channels.degradedFill,
    );
    above(
      ['channels', 'degradedFill'],
      c.channels.degradedFill,
      'workingSet.idleChannelFill',
      c.workingSet.idleChannelFill,
    );
    // Each step down in pressure must relax the batch size, or the hysteresis
    // would damp nothing.
    const f = c.batchFactor;
    above(['batchFactor', 'degraded'], f.degraded, 'batchFactor.critical', f.critical);
    above(['batchFactor', 'recovery'], f.recovery, 'batchFactor.degraded', f.degraded);
    above(['batchFactor', 'normal'], f.normal, 'batchFactor.recovery', f.recovery);
  });

export type BackpressureConfig = z.output<typeof backpressureConfigSchema>;
export type BackpressureConfigInput = z.input<typeof backpressureConfigSchema>;

/** Validates a backpressure configuration; a refusal names the field path. */
export function parseBackpressureConfig(
  input: unknown = {},
  path = 'backpressure',
): BackpressureConfig {
  return parseConfig(backpressureConfigSchema, input, path);
}
