import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

const fraction = z.number().gt(0).lt(1);

/** When a saturated byte budget is blamed on the sink rather than on memory. */
export const bottleneckDiagnosisConfigSchema = z.strictObject({
  /** Budget saturation at or above this counts as high. */
  highSaturation: z.number().gt(0).max(1).default(0.9),
  /** Memory below this share of the limit counts as low. */
  lowMemoryRatio: fraction.default(0.7),
  /** Both must hold this long before the diagnosis is made. */
  sustainedMs: z.number().int().min(0).default(30_000),
});

export type BottleneckDiagnosisConfig = z.output<typeof bottleneckDiagnosisConfigSchema>;
export type BottleneckDiagnosisConfigInput = z.input<typeof bottleneckDiagnosisConfigSchema>;

export function parseBottleneckDiagnosisConfig(
  input: unknown = {},
  path = 'bottleneck',
): BottleneckDiagnosisConfig {
  return parseConfig(bottleneckDiagnosisConfigSchema, input, path);
}
