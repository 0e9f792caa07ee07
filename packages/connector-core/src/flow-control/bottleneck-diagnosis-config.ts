import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

const fraction = z.number().gt(0).lt(1);

/** When a saturated byte budget is blamed on the sink rather than on memory. */
export interface BottleneckDiagnosisConfigInput {
  /**
   * Budget saturation (above 0, at most 1) at or above which it counts as high.
   * @defaultValue 0.9
   */
  highSaturation?: number | undefined;
  /**
   * Memory below this share (0 to 1, exclusive) of the limit counts as low.
   * @defaultValue 0.7
   */
  lowMemoryRatio?: number | undefined;
  /**
   * Both must hold this long, in ms, before the diagnosis is made.
   * @defaultValue 30000
   */
  sustainedMs?: number | undefined;
}

/**
 * The validator of {@link BottleneckDiagnosisConfigInput}; each key's meaning
 * and default are documented there (a type test proves the two agree).
 */
export const bottleneckDiagnosisConfigSchema = z.strictObject({
  highSaturation: z.number().gt(0).max(1).default(0.9),
  lowMemoryRatio: fraction.default(0.7),
  sustainedMs: z.number().int().min(0).default(30_000),
});

export type BottleneckDiagnosisConfig = z.output<typeof bottleneckDiagnosisConfigSchema>;

export function parseBottleneckDiagnosisConfig(
  input: unknown = {},
  path = 'bottleneck',
): BottleneckDiagnosisConfig {
  return parseConfig(bottleneckDiagnosisConfigSchema, input, path);
}
