import { z } from 'zod';
import { parseConfig } from '../parse-config.js';
import { requireAbove } from './threshold-order.js';

const fraction = z.number().gt(0).lt(1);
const factor = z.number().gt(0).max(1);
const durationMs = z.number().int().min(0);

/**
 * Thresholds and timings of the backpressure state machine. The defaults are
 * the operating points a production predecessor settled on; every one of
 * them is workload-tunable. Each threshold must sit strictly above the one it
 * escalates from (a refusal names the upper field).
 */
export interface BackpressureConfigInput {
  /** When memory (the live heap and buffers over the pipeline's `memoryLimitBytes`, ADR 0041) counts as pressure. */
  memory?: BackpressureMemoryInput | undefined;
  /** When the fill of the bounded queues on the gating path counts as pressure. */
  channels?: BackpressureChannelsInput | undefined;
  /** How high memory with empty queues is read. */
  workingSet?: BackpressureWorkingSetInput | undefined;
  /** When failing writes to raw count as pressure. */
  writeFailures?: BackpressureWriteFailuresInput | undefined;
  /**
   * How long conditions must stay clear before Recovery is entered, in ms.
   * @defaultValue 30000
   */
  holdMs?: number | undefined;
  /**
   * How long Recovery lasts, at its reduced batch size, before Normal, in ms.
   * @defaultValue 60000
   */
  recoveryDwellMs?: number | undefined;
  /** The share of the full batch size read in each state. */
  batchFactor?: BackpressureBatchFactorInput | undefined;
}

/** Memory thresholds, as shares (0 to 1, exclusive) of the memory limit. */
export interface BackpressureMemoryInput {
  /**
   * At or above this share of the memory limit, the pipeline is degraded.
   * @defaultValue 0.8
   */
  degradedRatio?: number | undefined;
  /**
   * Above this share, it is critical and the source pauses. Must be above
   * `degradedRatio`.
   * @defaultValue 0.9
   */
  criticalRatio?: number | undefined;
}

/** Queue-fill thresholds, as fills (0 to 1, exclusive) of the fullest bounded queue. */
export interface BackpressureChannelsInput {
  /**
   * Fill at or above which the pipeline is degraded. Must be above
   * `workingSet.idleChannelFill`.
   * @defaultValue 0.7
   */
  degradedFill?: number | undefined;
  /**
   * Fill above which it is critical. Must be above `degradedFill`.
   * @defaultValue 0.9
   */
  criticalFill?: number | undefined;
}

/** How high memory is read when nothing is queued. */
export interface BackpressureWorkingSetInput {
  /**
   * Below this fill on every channel, high memory is read as allocator
   * fragmentation (nothing is queued to account for it), not pressure.
   * @defaultValue 0.05
   */
  idleChannelFill?: number | undefined;
}

/** Failing writes to raw as a pressure signal. */
export interface BackpressureWriteFailuresInput {
  /**
   * Consecutive failed writes that degrade the pipeline (at least 1).
   * @defaultValue 1
   */
  degradedAfter?: number | undefined;
}

/**
 * The batch size in each state, as a factor (above 0, at most 1) of the full
 * size. Each step down in pressure must relax the batch size: `normal` above
 * `recovery` above `degraded` above `critical`.
 */
export interface BackpressureBatchFactorInput {
  /**
   * The factor in Normal, with no pressure.
   * @defaultValue 1
   */
  normal?: number | undefined;
  /**
   * The factor in Degraded.
   * @defaultValue 0.5
   */
  degraded?: number | undefined;
  /**
   * The factor in Critical (the source is also paused).
   * @defaultValue 0.25
   */
  critical?: number | undefined;
  /**
   * The factor in Recovery, after conditions cleared for `holdMs`.
   * @defaultValue 0.75
   */
  recovery?: number | undefined;
}

/**
 * The validator of {@link BackpressureConfigInput}; each key's meaning and
 * default are documented there (a type test proves the two agree).
 */
export const backpressureConfigSchema = z
  .strictObject({
    memory: z
      .strictObject({
        degradedRatio: fraction.default(0.8),
        criticalRatio: fraction.default(0.9),
      })
      .prefault({}),
    channels: z
      .strictObject({
        degradedFill: fraction.default(0.7),
        criticalFill: fraction.default(0.9),
      })
      .prefault({}),
    workingSet: z
      .strictObject({
        idleChannelFill: fraction.default(0.05),
      })
      .prefault({}),
    writeFailures: z
      .strictObject({
        degradedAfter: z.number().int().min(1).default(1),
      })
      .prefault({}),
    holdMs: durationMs.default(30_000),
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

/** Validates a backpressure configuration; a refusal names the field path. */
export function parseBackpressureConfig(
  input: unknown = {},
  path = 'backpressure',
): BackpressureConfig {
  return parseConfig(backpressureConfigSchema, input, path);
}
