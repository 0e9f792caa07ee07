import { describe, expect, it } from 'vitest';
import { BottleneckDiagnoser } from '../../src/flow-control/bottleneck-diagnosis.js';
import { parseBottleneckDiagnosisConfig } from '../../src/flow-control/bottleneck-diagnosis-config.js';

describe('BottleneckDiagnoser', () => {
  const config = parseBottleneckDiagnosisConfig({});

  it('names the sink as the bottleneck when saturation stays high while memory stays low', () => {
    const d = new BottleneckDiagnoser(config);
    expect(d.evaluate({ saturation: 0.95, memoryRatio: 0.3 }, 0)).toEqual({ kind: 'none' });
    expect(d.evaluate({ saturation: 0.97, memoryRatio: 0.3 }, 29_999).kind).toBe('none');
    expect(d.evaluate({ saturation: 1, memoryRatio: 0.35 }, 30_000)).toEqual({
      kind: 'sink-bottleneck',
      since: 0,
      saturation: 1,
      memoryRatio: 0.35,
    });
    expect(d.current.kind).toBe('sink-bottleneck');
  });

  it('makes no such diagnosis when memory is high too, or when saturation dips', () => {
    const d = new BottleneckDiagnoser(config);
    d.evaluate({ saturation: 0.95, memoryRatio: 0.85 }, 0);
    expect(d.evaluate({ saturation: 0.95, memoryRatio: 0.85 }, 60_000).kind).toBe('none');
    d.evaluate({ saturation: 0.95, memoryRatio: 0.3 }, 60_000);
    d.evaluate({ saturation: 0.5, memoryRatio: 0.3 }, 80_000);
    expect(d.evaluate({ saturation: 0.95, memoryRatio: 0.3 }, 100_000).kind).toBe('none');
  });

  it('refuses a saturation that is not a number', () => {
    const d = new BottleneckDiagnoser(config);
    expect(() => d.evaluate({ saturation: Number.NaN, memoryRatio: 0 }, 0)).toThrow(/saturation/);
  });

  it('refuses a clock reading that is not finite instead of diagnosing at once', () => {
    const d = new BottleneckDiagnoser(config);
    const saturated = { saturation: 1, memoryRatio: 0.3 };
    for (const now of [Number.NaN, Number.NaN, 1_000]) {
      try {
        d.evaluate(saturated, now);
      } catch (e) {
        expect(String(e)).toMatch(/TWG_FLOW_SIGNAL_INVALID: now/);
      }
    }
    expect(d.current.kind).toBe('none');
  });
});
