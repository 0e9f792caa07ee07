import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { parseBackpressureConfig } from '../../src/flow-control/backpressure-config.js';
import {
  BackpressureStateMachine,
  type BackpressureDecision,
  type BackpressureStateKind,
} from '../../src/flow-control/backpressure-state-machine.js';
import type { PressureCause, PressureSignals } from '../../src/flow-control/pressure-reading.js';
import { SourceThrottle } from '../../src/flow-control/source-throttle.js';
import { ManualClock } from '../../src/flow-control/clock.js';

const config = parseBackpressureConfig({});
const HOLD = config.holdMs;
const DWELL = config.recoveryDwellMs;

const calm: PressureSignals = { memoryRatio: 0.4, channelFill: 0.3, consecutiveWriteFailures: 0 };
const memHigh: PressureSignals = { ...calm, memoryRatio: 0.85 };
const memSevere: PressureSignals = { ...calm, memoryRatio: 0.95 };
const chanHigh: PressureSignals = { ...calm, channelFill: 0.75 };
const chanSevere: PressureSignals = { ...calm, channelFill: 0.95 };
const failing: PressureSignals = { ...calm, consecutiveWriteFailures: 1 };
// The working-set exception: memory at critical levels, nothing queued.
const fragmented: PressureSignals = {
  memoryRatio: 0.95,
  channelFill: 0.02,
  consecutiveWriteFailures: 0,
};

function rig() {
  const clock = new ManualClock(1_000);
  const throttle = new SourceThrottle();
  const machine = new BackpressureStateMachine(config, { startedAt: clock.now(), throttle });
  const at = (signals: PressureSignals, advanceMs = 0): BackpressureDecision => {
    clock.advance(advanceMs);
    return machine.evaluate(signals, clock.now());
  };
  return { clock, throttle, machine, at };
}

describe('BackpressureStateMachine: entering pressure', () => {
  it('starts Normal at full batch size with the source open', () => {
    const { at, throttle } = rig();
    const d = at(calm);
    expect(d).toMatchObject({ kind: 'steady', batchFactor: 1, pauseSource: false });
    expect(d.state.kind).toBe('normal');
    expect(throttle.paused).toBe(false);
  });

  it.each([
    ['memory at the degraded threshold', { ...calm, memoryRatio: 0.8 }, 'memory'],
    ['memory between the thresholds', memHigh, 'memory'],
    ['memory exactly at the critical threshold', { ...calm, memoryRatio: 0.9 }, 'memory'],
    ['channels at the degraded threshold', { ...calm, channelFill: 0.7 }, 'channels'],
    ['one write failure', failing, 'write-failures'],
  ] as const)('Normal -> Degraded on %s (batch factor 0.5)', (_name, signals, cause) => {
    const { at } = rig();
    const d = at(signals);
    expect(d).toMatchObject({ kind: 'transition', from: 'normal', batchFactor: 0.5 });
    expect(d.state).toMatchObject({ kind: 'degraded', cause });
    expect(d.pauseSource).toBe(false);
  });

  it('stays Normal just below every threshold', () => {
    const { at } = rig();
    const d = at({ memoryRatio: 0.79, channelFill: 0.69, consecutiveWriteFailures: 0 });
    expect(d.state.kind).toBe('normal');
  });

  it.each([
    ['memory above the critical threshold', memSevere, 'memory'],
    ['channels above the critical threshold', chanSevere, 'channels'],
  ] as const)(
    'Normal -> Critical on %s: batch factor 0.25, source paused',
    (_n, signals, cause) => {
      const { at, throttle } = rig();
      const d = at(signals);
      expect(d).toMatchObject({ kind: 'transition', from: 'normal', batchFactor: 0.25 });
      expect(d.state).toMatchObject({ kind: 'critical', cause });
      expect(d.pauseSource).toBe(true);
      expect(throttle.paused).toBe(true);
    },
  );

  it('Degraded -> Critical at once when pressure becomes severe', () => {
    const { at } = rig();
    at(chanHigh);
    const d = at(memSevere, 10);
    expect(d).toMatchObject({ kind: 'transition', from: 'degraded', pauseSource: true });
  });

  it('reports a transition once, then the same steady decision without allocating', () => {
    const { at } = rig();
    expect(at(memHigh).kind).toBe('transition');
    const steady = at(memHigh, 10);
    expect(steady.kind).toBe('steady');
    expect(at(memHigh, 10)).toBe(steady);
  });
});

describe('BackpressureStateMachine: hysteresis on the way out', () => {
  it('Degraded -> Recovery only after conditions stay clear for the hold period', () => {
    const { at } = rig();
    at(memHigh);
    expect(at(calm, 1).state).toMatchObject({ kind: 'degraded', calmSince: 1_001 });
    expect(at(calm, HOLD - 1).state.kind).toBe('degraded');
    const d = at(calm, 1);
    expect(d).toMatchObject({ kind: 'transition', from: 'degraded', batchFactor: 0.75 });
    expect(d.state.kind).toBe('recovery');
  });

  it('a single pressured sample restarts the hold', () => {
    const { at } = rig();
    at(chanHigh);
    at(calm, 1);
    at(calm, HOLD - 10);
    at(failing, 5); // pressure again, just before the hold would have ended
    expect(at(calm, 10).state.kind).toBe('degraded');
    expect(at(calm, HOLD - 1).state.kind).toBe('degraded');
    expect(at(calm, 1).state.kind).toBe('recovery');
  });

  it('Recovery -> Normal only after the recovery dwell', () => {
    const { at } = rig();
    at(memHigh);
    at(calm, 1);
    at(calm, HOLD);
    expect(at(calm, DWELL - 1).state.kind).toBe('recovery');
    const d = at(calm, 1);
    expect(d).toMatchObject({ kind: 'transition', from: 'recovery', batchFactor: 1 });
    expect(d.state.kind).toBe('normal');
  });

  it('Recovery -> Degraded on elevated pressure, and -> Critical on severe', () => {
    const toRecovery = () => {
      const r = rig();
      r.at(memHigh);
      r.at(calm, 1);
      r.at(calm, HOLD);
      expect(r.machine.state.kind).toBe('recovery');
      return r;
    };
    expect(toRecovery().at(chanHigh, 5)).toMatchObject({
      kind: 'transition',
      from: 'recovery',
      batchFactor: 0.5,
    });
    const severe = toRecovery();
    expect(severe.at(chanSevere, 5)).toMatchObject({
      kind: 'transition',
      from: 'recovery',
      pauseSource: true,
    });
    expect(severe.throttle.paused).toBe(true);
  });

  it('Critical -> Recovery after the hold; the source reopens as soon as it is calm', () => {
    const { at, throttle } = rig();
    at(memSevere);
    expect(throttle.paused).toBe(true);
    // Calm releases the pause at once; the state and its batch factor hold.
    expect(at(calm, 1)).toMatchObject({ state: { kind: 'critical' }, pauseSource: false });
    expect(throttle.paused).toBe(false);
    expect(at(calm, HOLD - 1)).toMatchObject({ state: { kind: 'critical' }, batchFactor: 0.25 });
    const d = at(calm, 1);
    expect(d).toMatchObject({
      kind: 'transition',
      from: 'critical',
      batchFactor: 0.75,
      pauseSource: false,
    });
    expect(throttle.paused).toBe(false);
  });

  it('in Critical an elevated reading keeps the source paused; a severe one after calm pauses it again', () => {
    const { at, throttle } = rig();
    at(chanSevere);
    expect(at(chanHigh, 1).pauseSource).toBe(true);
    expect(throttle.paused).toBe(true);
    expect(at(calm, 1).pauseSource).toBe(false);
    expect(throttle.paused).toBe(false);
    expect(at(chanSevere, 1)).toMatchObject({ state: { kind: 'critical' }, pauseSource: true });
    expect(throttle.paused).toBe(true);
  });

  it('Critical -> Degraded once pressure stays below critical (but elevated) for the hold', () => {
    const { at, throttle } = rig();
    at(chanSevere);
    at(chanHigh, 1);
    expect(at(chanHigh, HOLD - 1).state.kind).toBe('critical');
    const d = at(chanHigh, 1);
    expect(d).toMatchObject({ kind: 'transition', from: 'critical', batchFactor: 0.5 });
    expect(throttle.paused).toBe(false);
  });

  it('a severe sample while Critical restarts both holds', () => {
    const { at } = rig();
    at(chanSevere);
    at(calm, 1);
    at(chanSevere, HOLD - 10);
    at(calm, 5);
    expect(at(calm, HOLD - 1).state.kind).toBe('critical');
    expect(at(calm, 1).state.kind).toBe('recovery');
  });

  it('a clock that steps back cannot shorten a hold', () => {
    const { machine } = rig();
    machine.evaluate(memHigh, 10_000);
    machine.evaluate(calm, 10_001);
    expect(machine.evaluate(calm, 0).state.kind).toBe('degraded');
    expect(machine.evaluate(calm, 10_001 + HOLD - 1).state.kind).toBe('degraded');
    expect(machine.evaluate(calm, 10_001 + HOLD).state.kind).toBe('recovery');
  });

  it('a clock reading that is not finite is refused and cannot skip the hold or the dwell', () => {
    const { at, machine } = rig();
    at(memHigh);
    at(calm, 1);
    for (const bad of [Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => machine.evaluate(calm, bad)).toThrow(/TWG_FLOW_SIGNAL_INVALID: now/);
    }
    expect(machine.state.kind).toBe('degraded');
    expect(at(calm, HOLD - 1).state.kind).toBe('degraded');
    expect(at(calm, 1).state.kind).toBe('recovery');
    expect(() => machine.evaluate(calm, Number.POSITIVE_INFINITY)).toThrow(/now/);
    expect(at(calm, DWELL - 1).state.kind).toBe('recovery');
    expect(at(calm, 1).state.kind).toBe('normal');
  });
});

describe('BackpressureStateMachine: the working-set exception', () => {
  it('high memory over near-empty channels is fragmentation and triggers nothing', () => {
    const { at, throttle } = rig();
    const d = at(fragmented);
    expect(d.reading).toEqual({ level: 'fragmentation' });
    expect(d.state.kind).toBe('normal');
    expect(throttle.paused).toBe(false);
  });

  it('the same memory counts once anything is queued', () => {
    const { at } = rig();
    expect(at({ ...fragmented, channelFill: 0.05 }).state.kind).toBe('critical');
  });

  it('fragmentation counts as calm for the hold', () => {
    const { at } = rig();
    at(memHigh);
    at(fragmented, 1);
    expect(at(fragmented, HOLD).state.kind).toBe('recovery');
  });

  it('write failures still degrade a fragmented pipeline', () => {
    const { at } = rig();
    expect(at({ ...fragmented, consecutiveWriteFailures: 2 }).state).toMatchObject({
      kind: 'degraded',
      cause: 'write-failures',
    });
  });
});

describe('BackpressureStateMachine: configuration and inputs', () => {
  it('uses configured factors and thresholds', () => {
    const custom = parseBackpressureConfig({
      memory: { degradedRatio: 0.5, criticalRatio: 0.6 },
      batchFactor: { degraded: 0.4 },
      holdMs: 0,
    });
    const m = new BackpressureStateMachine(custom);
    expect(m.evaluate({ ...calm, memoryRatio: 0.55 }, 1)).toMatchObject({ batchFactor: 0.4 });
    expect(m.evaluate(calm, 2).state.kind).toBe('recovery');
  });

  it('refuses a signal that is not a number', () => {
    const m = new BackpressureStateMachine(config);
    expect(() => m.evaluate({ ...calm, memoryRatio: Number.NaN }, 1)).toThrow(
      /TWG_FLOW_SIGNAL_INVALID: memoryRatio/,
    );
    expect(() => m.evaluate({ ...calm, consecutiveWriteFailures: -1 }, 1)).toThrow(
      /consecutiveWriteFailures/,
    );
  });
});

describe('BackpressureStateMachine: no sawtooth (property)', () => {
  const sample = fc.record({
    dt: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 80_000 })),
    memoryRatio: fc.constantFrom(0.1, 0.5, 0.79, 0.8, 0.85, 0.9, 0.95),
    channelFill: fc.constantFrom(0, 0.03, 0.3, 0.69, 0.7, 0.8, 0.9, 0.95),
    consecutiveWriteFailures: fc.constantFrom(0, 0, 0, 1, 3),
  });

  it('the batch factor relaxes no faster than the hold and the dwell allow', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.array(sample, { minLength: 1, maxLength: 200 }),
        (holdMs, recoveryDwellMs, samples) => {
          const cfg = parseBackpressureConfig({ holdMs, recoveryDwellMs });
          const throttle = new SourceThrottle();
          const m = new BackpressureStateMachine(cfg, { throttle });
          let t = 0;
          let factor = 1;
          let lastDecreaseAt = Number.NEGATIVE_INFINITY;
          let lastPressureAt = Number.NEGATIVE_INFINITY;
          let lastSevereAt = Number.NEGATIVE_INFINITY;
          let recoveryAt = Number.NEGATIVE_INFINITY;
          for (const s of samples) {
            t += s.dt;
            const d = m.evaluate(s, t);
            const level = d.reading.level;
            if (level === 'elevated' || level === 'severe') lastPressureAt = t;
            if (level === 'severe') lastSevereAt = t;
            // Paused only in Critical, and never on a calm reading.
            const calmNow = level === 'clear' || level === 'fragmentation';
            expect(d.pauseSource).toBe(d.state.kind === 'critical' && !calmNow);
            expect(throttle.paused).toBe(d.pauseSource);
            expect(d.batchFactor).toBe(cfg.batchFactor[d.state.kind]);
            if (d.batchFactor < factor) {
              // Tightening answers pressure seen in this very sample.
              expect(level === 'elevated' || level === 'severe').toBe(true);
              lastDecreaseAt = t;
            }
            if (d.batchFactor > factor) {
              expect(t - lastDecreaseAt).toBeGreaterThanOrEqual(holdMs);
              if (d.state.kind === 'recovery')
                expect(t - lastPressureAt).toBeGreaterThanOrEqual(holdMs);
              if (d.state.kind === 'degraded')
                expect(t - lastSevereAt).toBeGreaterThanOrEqual(holdMs);
              if (d.state.kind === 'normal')
                expect(t - recoveryAt).toBeGreaterThanOrEqual(recoveryDwellMs);
            }
            if (d.kind === 'transition' && d.state.kind === 'recovery') recoveryAt = t;
            factor = d.batchFactor;
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('BackpressureStateMachine: types', () => {
  it('states and decisions are discriminated unions: a field exists only where it means something', () => {
    const { machine, at } = rig();
    const s = machine.state;
    // @ts-expect-error a Normal state has no cause
    expect(s.cause).toBeUndefined();
    const d = at(memHigh);
    // @ts-expect-error `from` exists only on a transition
    expect(at(memHigh).from).toBeUndefined();
    if (d.kind === 'transition' && d.state.kind === 'degraded') {
      expectTypeOf(d.from).toEqualTypeOf<BackpressureStateKind>();
      expectTypeOf(d.state.cause).toEqualTypeOf<PressureCause>();
    }
  });
});
