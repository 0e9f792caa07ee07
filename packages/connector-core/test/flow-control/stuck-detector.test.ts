import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/flow-control/clock.js';
import { StuckDetector, type StuckSignals } from '../../src/flow-control/stuck-detector.js';
import { parseStuckDetectorConfig } from '../../src/flow-control/stuck-detector-config.js';

const config = parseStuckDetectorConfig({
  warnAfterMs: 60_000,
  unhealthyAfterMs: 120_000,
  exitAfterMs: 180_000,
  clearAfterMs: 30_000,
});

function rig() {
  const clock = new ManualClock();
  const detector = new StuckDetector(config);
  let progress = 0;
  const sample = (s: Partial<StuckSignals> & { progressed?: boolean }, advanceMs = 0) => {
    clock.advance(advanceMs);
    if (s.progressed === true) progress += 1;
    return detector.evaluate(
      { memoryRatio: s.memoryRatio ?? 0.85, channelFill: s.channelFill ?? 0, progress },
      clock.now(),
    );
  };
  return { clock, detector, sample };
}

/** Samples every 10 s for `ms`, with the given signals. */
function hold(
  r: ReturnType<typeof rig>,
  ms: number,
  s: Partial<StuckSignals> & { progressed?: boolean } = {},
) {
  let last = r.sample(s, 0);
  for (let t = 0; t < ms; t += 10_000) last = r.sample(s, 10_000);
  return last;
}

describe('StuckDetector', () => {
  it('escalates warn -> unhealthy -> exit-requested while memory is high, channels empty and nothing moves', () => {
    const r = rig();
    expect(r.sample({})).toEqual({ kind: 'steady', status: { level: 'ok' } }); // sets the baseline
    expect(r.sample({}, 1).status.level).toBe('ok'); // the spell starts here, at t=1
    expect(r.sample({}, 59_999).status.level).toBe('ok');
    expect(r.sample({}, 1)).toEqual({
      kind: 'escalated',
      from: 'ok',
      status: { level: 'warn', since: 1, clearingSince: null },
    });
    expect(r.sample({}, 60_000)).toMatchObject({
      kind: 'escalated',
      from: 'warn',
      status: { level: 'unhealthy' },
    });
    expect(r.sample({}, 60_000)).toMatchObject({
      kind: 'escalated',
      from: 'unhealthy',
      status: { level: 'exit-requested', since: 1 },
    });
  });

  it('any progress restarts the spell before it escalates', () => {
    const r = rig();
    r.sample({});
    r.sample({}, 50_000);
    r.sample({ progressed: true }, 5_000);
    expect(r.sample({}, 5_000).status.level).toBe('ok');
    expect(r.sample({}, 55_000).status.level).toBe('ok');
    expect(r.sample({}, 5_000).status.level).toBe('warn');
  });

  it('a saturated sink is never stuck, however long it takes', () => {
    const r = rig();
    expect(hold(r, 3_600_000, { channelFill: 1, memoryRatio: 0.95 }).status.level).toBe('ok');
  });

  it('an idle pipeline with low memory is never stuck', () => {
    const r = rig();
    expect(hold(r, 3_600_000, { memoryRatio: 0.3 }).status.level).toBe('ok');
  });

  it('clears only after progress has held, with no stuck sample, for clearAfterMs', () => {
    const r = rig();
    hold(r, 130_000);
    expect(r.detector.current.level).toBe('unhealthy');
    // One ack, then stuck again: latched, and the clearing restarts.
    r.sample({ progressed: true }, 10_000);
    expect(r.detector.current).toMatchObject({ level: 'unhealthy', clearingSince: r.clock.now() });
    r.sample({}, 10_000);
    expect(r.detector.current).toMatchObject({ level: 'unhealthy', clearingSince: null });
    // Now sustained progress.
    const start = r.clock.now() + 10_000;
    r.sample({ progressed: true }, 10_000);
    expect(hold(r, 20_000, { progressed: true }).status.level).toBe('unhealthy');
    const cleared = r.sample({ progressed: true }, start + 30_000 - r.clock.now());
    expect(cleared).toEqual({ kind: 'cleared', from: 'unhealthy', status: { level: 'ok' } });
  });

  it('stays latched when memory merely drops without any progress', () => {
    const r = rig();
    hold(r, 70_000);
    expect(r.detector.current.level).toBe('warn');
    expect(hold(r, 600_000, { memoryRatio: 0.2 }).status.level).toBe('warn');
  });

  it('does not count bursty progress between stuck samples as clearing', () => {
    const r = rig();
    hold(r, 70_000);
    for (let i = 0; i < 20; i++) {
      r.sample({ progressed: true }, 10_000);
      r.sample({}, 10_000);
    }
    expect(r.detector.current.level).toBe('warn');
  });

  it('refuses signals that are not numbers', () => {
    const d = new StuckDetector(config);
    expect(() => d.evaluate({ memoryRatio: 0.5, channelFill: -1, progress: 0 }, 0)).toThrow(
      /TWG_FLOW_SIGNAL_INVALID: channelFill/,
    );
    expect(() => d.evaluate({ memoryRatio: 0.5, channelFill: 0, progress: Number.NaN }, 0)).toThrow(
      /progress/,
    );
  });

  it('refuses a clock reading that is not finite, so a spell cannot start at minus infinity', () => {
    const stuck = { memoryRatio: 0.85, channelFill: 0, progress: 0 };
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => new StuckDetector(config).evaluate(stuck, bad)).toThrow(
        /TWG_FLOW_SIGNAL_INVALID: now/,
      );
    }
    // What the refusal prevents: two bad readings, then one good one, used to
    // read as stuck for an infinite time and request an exit at once.
    const d = new StuckDetector(config);
    for (const now of [Number.NaN, Number.NaN, 1_000]) {
      try {
        d.evaluate(stuck, now);
      } catch {
        // refused
      }
    }
    expect(d.current.level).toBe('ok');
  });
});
