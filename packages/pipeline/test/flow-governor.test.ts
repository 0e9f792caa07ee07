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

interface Reading {
  readonly progress?: number;
  readonly rawFill?: number;
  readonly sourceFill?: number;
  readonly failures?: number;
}

const sample = (memoryBytes: number, r: Reading = {}) => ({
  memoryBytes,
  progress: r.progress ?? 0,
  raw: { queueFill: r.rawFill ?? 0, consecutiveFailures: r.failures ?? 0 },
  sourceFill: r.sourceFill ?? 0,
});

describe('FlowGovernor', () => {
  it('critical memory over a queue that holds records pauses the source, and reports the change once', () => {
    const { gov } = governor({ backpressure: { holdMs: 0, recoveryDwellMs: 0 } });
    expect(gov.evaluate(sample(100, { rawFill: 0.5 })).pauseChanged).toBe(false);
    const critical = gov.evaluate(sample(950, { rawFill: 0.5 }));
    expect(critical.backpressure.kind).toBe('transition');
    expect(gov.describe().state).toBe('critical');
    expect(gov.throttle.paused).toBe(true);
    expect(critical.pauseChanged).toBe(true);
    expect(gov.evaluate(sample(950, { rawFill: 0.5 })).pauseChanged).toBe(false);
    const calm = gov.evaluate(sample(100, { rawFill: 0.5 }));
    expect(gov.throttle.paused).toBe(false);
    expect(calm.pauseChanged).toBe(true);
  });

  it("raw's queue above the critical fill makes the pipeline critical and pauses the source", () => {
    // Before: the channel signal was the budget's saturation capped below the
    // degraded fill, so no queue could ever move the machine.
    const { gov } = governor();
    gov.evaluate(sample(0, { rawFill: 0.95 }));
    expect(gov.describe()).toMatchObject({ state: 'critical', channelFill: 0.95 });
    expect(gov.batchFactor).toBe(0.25);
    expect(gov.throttle.paused).toBe(true);
    // Calm releases the pause at once; the batch factor holds for the hold period.
    gov.evaluate(sample(0, { rawFill: 0.1, progress: 1 }));
    expect(gov.throttle.paused).toBe(false);
    expect(gov.describe().state).toBe('critical');
  });

  it("the source's prefetch is a channel too: its fill degrades the pipeline", () => {
    const { gov } = governor();
    gov.evaluate(sample(0, { sourceFill: 0.8, rawFill: 0.2 }));
    expect(gov.describe()).toMatchObject({ state: 'degraded', channelFill: 0.8 });
    expect(gov.throttle.paused).toBe(false);
  });

  it('high memory over empty queues is fragmentation, not pressure: the source keeps reading', () => {
    const { gov } = governor();
    expect(gov.budget.tryAcquire(500).kind).toBe('granted');
    gov.evaluate(sample(950));
    expect(gov.throttle.paused).toBe(false);
    expect(gov.describe().state).toBe('normal');
  });

  it('a full byte budget alone never moves the state: admission already stops there', () => {
    const { gov } = governor();
    expect(gov.budget.tryAcquire(1000).kind).toBe('granted');
    expect(gov.budget.saturation).toBe(1);
    for (let i = 0; i < 5; i++) gov.evaluate(sample(0, { progress: i }));
    expect(gov.describe().state).toBe('normal');
    expect(gov.batchFactor).toBe(1);
    expect(gov.throttle.paused).toBe(false);
  });

  it("raw's failing writes degrade the pipeline and shrink the batch factor", () => {
    const { gov } = governor();
    gov.evaluate(sample(0, { failures: 3 }));
    expect(gov.describe()).toMatchObject({ state: 'degraded', rawWriteFailures: 3 });
    expect(gov.batchFactor).toBeLessThan(1);
  });

  const stuckConfig = {
    stuckDetector: { warnAfterMs: 10, unhealthyAfterMs: 20, exitAfterMs: 30, clearAfterMs: 5 },
  };

  it('no progress, memory high and bytes held over empty queues: the stuck detector escalates', () => {
    const { gov, clock } = governor(stuckConfig);
    // Raw took the batches (its queue is empty) and never acknowledges them.
    expect(gov.budget.tryAcquire(300).kind).toBe('granted');
    const levels: string[] = [];
    for (let t = 0; t <= 40; t += 5) {
      const cycle = gov.evaluate(sample(900, { progress: 7 }));
      if (cycle.stuck.kind !== 'steady') levels.push(cycle.stuck.status.level);
      clock.advance(5);
    }
    expect(levels).toEqual(['warn', 'unhealthy', 'exit-requested']);
    expect(gov.health(true).live.ok).toBe(false);
  });

  it('an idle pipeline is not a stuck one: a drained source with memory at 90% stays live', () => {
    // Before: nothing read and nothing acknowledged read as no progress, and
    // an endless source with nothing to give failed /live, then stopped the run.
    const { gov, clock } = governor(stuckConfig);
    for (let t = 0; t <= 60; t += 5) {
      expect(gov.evaluate(sample(900, { progress: 7 })).stuck.kind).toBe('steady');
      clock.advance(5);
    }
    expect(gov.describe().stuck).toBe('ok');
    expect(gov.health(true).live.ok).toBe(true);
  });

  it('progress keeps the stuck detector quiet however long memory stays high', () => {
    const { gov, clock } = governor(stuckConfig);
    expect(gov.budget.tryAcquire(300).kind).toBe('granted');
    for (let t = 0; t <= 40; t += 5) {
      expect(gov.evaluate(sample(900, { progress: t })).stuck.kind).toBe('steady');
      clock.advance(5);
    }
    expect(gov.describe().stuck).toBe('ok');
  });
});
