import { ManualClock } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { FlowGovernor } from '../src/flow-governor.js';
import { parsePipelineConfig, type PipelineConfigInput } from '../src/pipeline-config.js';

// The governor alone, on a manual clock: each evaluate() is one flow cycle.

const LIMIT = 1000;

function governor(flowControl: PipelineConfigInput['flowControl'] = {}) {
  const config = parsePipelineConfig({
    memoryLimitBytes: LIMIT,
    flowControl: {
      byteBudget: { bytes: 1000, warmUp: { fraction: 1 } },
      ...flowControl,
    },
  });
  const clock = new ManualClock();
  return { clock, gov: new FlowGovernor(config.flowControl, LIMIT, clock) };
}

const sample = (memoryBytes: number, progress = 0, consecutiveWriteFailures = 0) => ({
  memoryBytes,
  progress,
  consecutiveWriteFailures,
});

describe('FlowGovernor', () => {
  it('critical memory with records in flight pauses the source, and reports the change once', () => {
    const { gov } = governor({ backpressure: { holdMs: 0, recoveryDwellMs: 0 } });
    expect(gov.budget.tryAcquire(500).kind).toBe('granted');
    expect(gov.evaluate(sample(100)).pauseChanged).toBe(false);
    const critical = gov.evaluate(sample(950));
    expect(critical.backpressure.kind).toBe('transition');
    expect(gov.describe().state).toBe('critical');
    expect(gov.throttle.paused).toBe(true);
    expect(critical.pauseChanged).toBe(true);
    expect(gov.evaluate(sample(950)).pauseChanged).toBe(false);
    const calm = gov.evaluate(sample(100));
    expect(gov.throttle.paused).toBe(false);
    expect(calm.pauseChanged).toBe(true);
  });

  it('high memory with nothing in flight is fragmentation, not pressure: the source keeps reading', () => {
    const { gov } = governor();
    gov.evaluate(sample(950));
    expect(gov.throttle.paused).toBe(false);
    expect(gov.describe().state).toBe('normal');
  });

  it('a full byte budget alone never moves the state: admission already stops there', () => {
    const { gov } = governor();
    expect(gov.budget.tryAcquire(1000).kind).toBe('granted');
    expect(gov.budget.saturation).toBe(1);
    for (let i = 0; i < 5; i++) gov.evaluate(sample(0, i));
    expect(gov.describe().state).toBe('normal');
    expect(gov.batchFactor).toBe(1);
    expect(gov.throttle.paused).toBe(false);
  });

  it("raw's consecutive write failures degrade the pipeline and shrink the batch factor", () => {
    const { gov } = governor();
    gov.evaluate(sample(0, 0, 3));
    expect(gov.describe().state).toBe('degraded');
    expect(gov.batchFactor).toBeLessThan(1);
  });

  it('no progress, memory held and nothing in flight: the stuck detector escalates on its clock', () => {
    const { gov, clock } = governor({
      stuckDetector: { warnAfterMs: 10, unhealthyAfterMs: 20, exitAfterMs: 30, clearAfterMs: 5 },
    });
    const levels: string[] = [];
    for (let t = 0; t <= 40; t += 5) {
      const cycle = gov.evaluate(sample(900, 7));
      if (cycle.stuck.kind !== 'steady') levels.push(cycle.stuck.status.level);
      clock.advance(5);
    }
    expect(levels).toEqual(['warn', 'unhealthy', 'exit-requested']);
    expect(gov.health(true).live.ok).toBe(false);
  });

  it('progress keeps the stuck detector quiet however long memory stays high', () => {
    const { gov, clock } = governor({
      stuckDetector: { warnAfterMs: 10, unhealthyAfterMs: 20, exitAfterMs: 30, clearAfterMs: 5 },
    });
    for (let t = 0; t <= 40; t += 5) {
      expect(gov.evaluate(sample(900, t)).stuck.kind).toBe('steady');
      clock.advance(5);
    }
    expect(gov.describe().stuck).toBe('ok');
  });
});
