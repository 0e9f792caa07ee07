import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseBackpressureConfig } from '../../src/flow-control/backpressure-config.js';
import { parseByteBudgetConfig } from '../../src/flow-control/byte-budget-config.js';
import { parseExpansionEstimatorConfig } from '../../src/flow-control/expansion-estimator-config.js';
import { parseFlowControlConfig } from '../../src/flow-control/flow-control-config.js';
import { parseQuarantineLaneConfig } from '../../src/flow-control/quarantine-lane-config.js';
import { parseStuckDetectorConfig } from '../../src/flow-control/stuck-detector-config.js';

function refusal(run: () => unknown): ConfigError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('flow-control configuration', () => {
  it('defaults to the reference operating points', () => {
    const c = parseFlowControlConfig({});
    expect(c.backpressure).toEqual({
      memory: { degradedRatio: 0.8, criticalRatio: 0.9 },
      channels: { degradedFill: 0.7, criticalFill: 0.9 },
      workingSet: { idleChannelFill: 0.05 },
      writeFailures: { degradedAfter: 1 },
      holdMs: 30_000,
      recoveryDwellMs: 60_000,
      batchFactor: { normal: 1, degraded: 0.5, critical: 0.25, recovery: 0.75 },
    });
    expect(c.expansion).toMatchObject({ percentile: 0.95 });
    expect(c.byteBudget.warmUp).toMatchObject({ fraction: 0.25 });
  });

  it.each([
    [
      { memory: { degradedRatio: 0.95 } },
      'backpressure.memory.criticalRatio',
      /must be above memory\.degradedRatio \(0\.95\)/,
    ],
    [
      { channels: { degradedFill: 0.9, criticalFill: 0.8 } },
      'backpressure.channels.criticalFill',
      /must be above channels\.degradedFill/,
    ],
    [
      { workingSet: { idleChannelFill: 0.75 } },
      'backpressure.channels.degradedFill',
      /must be above workingSet\.idleChannelFill/,
    ],
    [
      { batchFactor: { critical: 0.6 } },
      'backpressure.batchFactor.degraded',
      /must be above batchFactor\.critical/,
    ],
    [
      { memory: { criticalRatio: 1.2 } },
      'backpressure.memory.criticalRatio',
      /Too big: expected number to be <1/,
    ],
    [{ holdMs: -1 }, 'backpressure.holdMs', />=0/],
    [{ holdMS: 10 }, 'backpressure.holdMS', /unknown key/],
  ])('refuses backpressure %j at %s', (input, path, reason) => {
    const err = refusal(() => parseBackpressureConfig(input));
    expect(err.code).toBe('TWG_CONFIG_INVALID');
    expect(err.path).toBe(path);
    expect(err.reason).toMatch(reason);
  });

  it('refuses a negative or zero budget with the field path', () => {
    const err = refusal(() => parseByteBudgetConfig({ bytes: -1 }));
    expect(err.path).toBe('byteBudget.bytes');
    expect(err.message).toMatch(/byteBudget\.bytes: Too small/);
    expect(refusal(() => parseByteBudgetConfig({ warmUp: { fraction: 0 } })).path).toBe(
      'byteBudget.warmUp.fraction',
    );
  });

  it('refuses stuck-detector escalations out of order', () => {
    const err = refusal(() => parseStuckDetectorConfig({ warnAfterMs: 400_000 }));
    expect(err.path).toBe('stuckDetector.unhealthyAfterMs');
    expect(err.reason).toMatch(/must be above warnAfterMs \(400000\)/);
  });

  it('refuses an estimator that could never collect enough samples', () => {
    const err = refusal(() => parseExpansionEstimatorConfig({ minSamples: 200, window: 100 }));
    expect(err.path).toBe('expansion.minSamples');
  });

  it('refuses a quarantine lane without room', () => {
    expect(refusal(() => parseQuarantineLaneConfig({ capacity: 0 })).path).toBe(
      'quarantine.capacity',
    );
  });

  it('names the full path inside the combined configuration, and lists every problem', () => {
    const err = refusal(() =>
      parseFlowControlConfig({ byteBudget: { bytes: -5 }, backpressure: { holdMs: 'soon' } }),
    );
    expect(err.path).toBe('flowControl.backpressure.holdMs');
    expect(err.message).toMatch(/also: flowControl\.byteBudget\.bytes/);
  });
});
