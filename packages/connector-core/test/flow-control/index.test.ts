import { describe, expect, it } from 'vitest';
import * as core from '../../src/index.js';

describe('flow control from the package root', () => {
  it('exports every mechanism through @thalweg/connector-core', () => {
    for (const name of [
      'BackpressureStateMachine',
      'StuckDetector',
      'ByteBudget',
      'ExpansionEstimator',
      'BottleneckDiagnoser',
      'QuarantineLane',
      'SourceThrottle',
      'ManualClock',
      'buildHealthReport',
      'healthResponse',
      'parseFlowControlConfig',
      'FlowControlError',
    ]) {
      expect(core).toHaveProperty(name);
    }
  });
});
