import type { BackpressureConfig } from './backpressure-config.js';
import { assertRatio, FlowControlError } from './flow-control-errors.js';

/** What the pipeline measures, sampled by the embedder at each evaluation. */
export interface PressureSignals {
  /** Memory in use over the memory limit (heap or RSS, the embedder's choice). */
  readonly memoryRatio: number;
  /** Fill of the fullest bounded channel between stages (source, decoded), 0..1. */
  readonly channelFill: number;
  /** Writes that failed in a row on the gating sink; 0 after any success. */
  readonly consecutiveWriteFailures: number;
}

export type PressureCause = 'memory' | 'channels' | 'write-failures';

/**
 * One sample classified. `fragmentation` is the working-set exception: memory
 * is high but nothing is queued that could account for it, so it is stale
 * allocator state and throttling on it would cost throughput for nothing.
 */
export type PressureReading =
  | { readonly level: 'clear' }
  | { readonly level: 'fragmentation' }
  | { readonly level: 'elevated'; readonly cause: PressureCause }
  | { readonly level: 'severe'; readonly cause: 'memory' | 'channels' };

// Readings are shared constants so that classifying a sample never allocates.
const CLEAR: PressureReading = Object.freeze({ level: 'clear' });
const FRAGMENTATION: PressureReading = Object.freeze({ level: 'fragmentation' });
const ELEVATED_MEMORY: PressureReading = Object.freeze({ level: 'elevated', cause: 'memory' });
const ELEVATED_CHANNELS: PressureReading = Object.freeze({ level: 'elevated', cause: 'channels' });
const ELEVATED_FAILURES: PressureReading = Object.freeze({
  level: 'elevated',
  cause: 'write-failures',
});
const SEVERE_MEMORY: PressureReading = Object.freeze({ level: 'severe', cause: 'memory' });
const SEVERE_CHANNELS: PressureReading = Object.freeze({ level: 'severe', cause: 'channels' });

/**
 * Classifies one sample. Boundaries: degraded from the degraded threshold
 * inclusive, critical strictly above the critical threshold. Write failures
 * degrade but never make the pipeline critical: pausing the source does not
 * help a sink that refuses writes, and retries already slow the intake.
 */
export function classifyPressure(
  signals: PressureSignals,
  config: BackpressureConfig,
): PressureReading {
  const { memoryRatio, channelFill, consecutiveWriteFailures } = signals;
  assertRatio(memoryRatio, 'memoryRatio');
  assertRatio(channelFill, 'channelFill');
  if (!Number.isSafeInteger(consecutiveWriteFailures) || consecutiveWriteFailures < 0) {
    throw new FlowControlError(
      'TWG_FLOW_SIGNAL_INVALID',
      `consecutiveWriteFailures: expected a non-negative integer, got ${String(consecutiveWriteFailures)}`,
    );
  }
  // Memory only counts as pressure while something is queued to explain it.
  const memoryCounts = channelFill >= config.workingSet.idleChannelFill;
  if (memoryCounts && memoryRatio > config.memory.criticalRatio) return SEVERE_MEMORY;
  if (channelFill > config.channels.criticalFill) return SEVERE_CHANNELS;
  if (memoryCounts && memoryRatio >= config.memory.degradedRatio) return ELEVATED_MEMORY;
  if (channelFill >= config.channels.degradedFill) return ELEVATED_CHANNELS;
  if (consecutiveWriteFailures >= config.writeFailures.degradedAfter) return ELEVATED_FAILURES;
  if (!memoryCounts && memoryRatio >= config.memory.degradedRatio) return FRAGMENTATION;
  return CLEAR;
}
