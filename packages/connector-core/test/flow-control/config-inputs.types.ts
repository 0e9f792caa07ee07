// Type tests, compiled by tsc -b (not a vitest file): the config inputs are
// written out as interfaces so their TSDoc reaches the .d.ts (a zod-inferred
// type carries none), and the schema stays the validator. tsc fails the moment
// an interface and its schema disagree on a key, a type, or whether a key is
// optional, at any depth.
import type { z } from 'zod';
import type {
  BackpressureConfigInput,
  backpressureConfigSchema,
  BottleneckDiagnosisConfigInput,
  bottleneckDiagnosisConfigSchema,
  ByteBudgetConfigInput,
  byteBudgetConfigSchema,
  ExpansionEstimatorConfigInput,
  expansionEstimatorConfigSchema,
  FlowControlConfigInput,
  flowControlConfigSchema,
  QuarantineLaneConfigInput,
  quarantineLaneConfigSchema,
  StuckDetectorConfigInput,
  stuckDetectorConfigSchema,
} from '../../src/index.js';
import { agree, type Equals } from '@thalweg/test-services';

agree<Equals<BackpressureConfigInput, z.input<typeof backpressureConfigSchema>>>();
agree<Equals<StuckDetectorConfigInput, z.input<typeof stuckDetectorConfigSchema>>>();
agree<Equals<ByteBudgetConfigInput, z.input<typeof byteBudgetConfigSchema>>>();
agree<Equals<ExpansionEstimatorConfigInput, z.input<typeof expansionEstimatorConfigSchema>>>();
agree<Equals<BottleneckDiagnosisConfigInput, z.input<typeof bottleneckDiagnosisConfigSchema>>>();
agree<Equals<QuarantineLaneConfigInput, z.input<typeof quarantineLaneConfigSchema>>>();
agree<Equals<FlowControlConfigInput, z.input<typeof flowControlConfigSchema>>>();

// The check catches each kind of drift:
type Backpressure = z.input<typeof backpressureConfigSchema>;
// @ts-expect-error a key the schema does not have
agree<Equals<BackpressureConfigInput & { extra?: number }, Backpressure>>();
// @ts-expect-error a key made required that the schema defaults
agree<Equals<BackpressureConfigInput & { holdMs: number }, Backpressure>>();
// @ts-expect-error a key missing from the interface
agree<Equals<Omit<BackpressureConfigInput, 'holdMs'>, Backpressure>>();
type WrongNested = Omit<BackpressureConfigInput, 'memory'> & {
  memory?: { degradedRatio?: string | undefined; criticalRatio?: number | undefined } | undefined;
};
// @ts-expect-error a nested key of the wrong type
agree<Equals<WrongNested, Backpressure>>();
