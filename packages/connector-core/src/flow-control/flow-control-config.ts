import { z } from 'zod';
import { parseConfig } from '../parse-config.js';
import { backpressureConfigSchema, type BackpressureConfigInput } from './backpressure-config.js';
import {
  bottleneckDiagnosisConfigSchema,
  type BottleneckDiagnosisConfigInput,
} from './bottleneck-diagnosis-config.js';
import { byteBudgetConfigSchema, type ByteBudgetConfigInput } from './byte-budget-config.js';
import {
  expansionEstimatorConfigSchema,
  type ExpansionEstimatorConfigInput,
} from './expansion-estimator-config.js';
import {
  quarantineLaneConfigSchema,
  type QuarantineLaneConfigInput,
} from './quarantine-lane-config.js';
import {
  stuckDetectorConfigSchema,
  type StuckDetectorConfigInput,
} from './stuck-detector-config.js';

/**
 * Every flow-control setting in one object, for an embedder that validates
 * its whole configuration once at start. Each part defaults on its own, so
 * `{}` is a complete configuration.
 */
export interface FlowControlConfigInput {
  /** The backpressure state machine's thresholds and timings. */
  backpressure?: BackpressureConfigInput | undefined;
  /** When the pipeline counts as stuck, and how that escalates. */
  stuckDetector?: StuckDetectorConfigInput | undefined;
  /** The admission budget of bytes in flight. */
  byteBudget?: ByteBudgetConfigInput | undefined;
  /** How a record's in-memory size is estimated from its wire size. */
  expansion?: ExpansionEstimatorConfigInput | undefined;
  /** When a saturated budget is blamed on the sink rather than on memory. */
  bottleneck?: BottleneckDiagnosisConfigInput | undefined;
  /** The quarantine lane's bounds. */
  quarantine?: QuarantineLaneConfigInput | undefined;
}

/**
 * The validator of {@link FlowControlConfigInput} (a type test proves the two
 * agree).
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

export function parseFlowControlConfig(
  input: unknown = {},
  path = 'flowControl',
): FlowControlConfig {
  return parseConfig(flowControlConfigSchema, input, path);
}
