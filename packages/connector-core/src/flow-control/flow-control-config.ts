import { z } from 'zod';
import { parseConfig } from '../parse-config.js';
import { backpressureConfigSchema } from './backpressure-config.js';
import { bottleneckDiagnosisConfigSchema } from './bottleneck-diagnosis-config.js';
import { byteBudgetConfigSchema } from './byte-budget-config.js';
import { expansionEstimatorConfigSchema } from './expansion-estimator-config.js';
import { quarantineLaneConfigSchema } from './quarantine-lane-config.js';
import { stuckDetectorConfigSchema } from './stuck-detector-config.js';

/**
 * Every flow-control setting in one object, for an embedder that validates
 * its whole configuration once at start. Each part defaults on its own, so
 * `{}` is a complete configuration.
 */
export const flowControlConfigSchema = z.strictObject({
  backpressure: backpressureConfigSchema.prefault({}),
  stuckDetector: stuckDetectorConfigSchema.prefault({}),
  byteBudget: byteBudgetConfigSchema.prefault({}),
  expansion: expansionEstimatorConfigSchema.prefault({}),
  bottleneck: bottleneckDiagnosisConfigSchema.prefault({}),
  quarantine: quarantineLaneConfigSchema.prefault({}),
});

export type FlowControlConfig = z.output<typeof flowControlConfigSchema>;
export type FlowControlConfigInput = z.input<typeof flowControlConfigSchema>;

export function parseFlowControlConfig(
  input: unknown = {},
  path = 'flowControl',
): FlowControlConfig {
  return parseConfig(flowControlConfigSchema, input, path);
}
