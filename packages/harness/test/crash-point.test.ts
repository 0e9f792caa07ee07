import { describe, expect, it } from 'vitest';
import { formatCrashAt, parseCrashAt, Tripwire, type CrashAt } from '../src/crash-point.js';

describe('THALWEG_CRASH_AT', () => {
  it('parses every point, and round-trips through format', () => {
    const cases: CrashAt[] = [
      { point: 'raw-submit', n: 3 },
      { point: 'raw-acked', n: 1 },
      { point: 'secondary-acked', n: 12 },
      { point: 'checkpoint', n: 2, phase: 'before' },
      { point: 'checkpoint', n: 2, phase: 'after' },
      { point: 'coverage-write', n: 4 },
      { point: 'recovery-window', n: 1 },
    ];
    for (const at of cases) expect(parseCrashAt(formatCrashAt(at))).toEqual(at);
    expect(parseCrashAt(undefined)).toBeNull();
    expect(parseCrashAt('')).toBeNull();
  });

  it('refuses malformed values, naming the variable and the reason', () => {
    expect(() => parseCrashAt('raw-sumbit:1')).toThrow(/THALWEG_CRASH_AT=.*point must be one of/);
    expect(() => parseCrashAt('raw-submit:0')).toThrow(/count must be a positive integer/);
    expect(() => parseCrashAt('raw-submit:x')).toThrow(/count must be a positive integer/);
    expect(() => parseCrashAt('checkpoint:1')).toThrow(/needs a phase/);
    expect(() => parseCrashAt('raw-acked:1:before')).toThrow(/takes no phase/);
    expect(() => parseCrashAt('checkpoint:1:after:x')).toThrow(/too many fields/);
  });
});

describe('Tripwire', () => {
  it('dies at the n-th occurrence of its point only', () => {
    const died: string[] = [];
    const wire = new Tripwire({ point: 'raw-acked', n: 3 }, (at) => died.push(formatCrashAt(at)));
    wire.pass('raw-submit');
    wire.pass('raw-acked');
    wire.pass('raw-submit');
    wire.pass('raw-acked');
    expect(died).toEqual([]);
    wire.pass('raw-acked');
    expect(died).toEqual(['raw-acked:3']);
    wire.pass('raw-acked');
    expect(died).toEqual(['raw-acked:3']);
    expect(wire.count('raw-acked')).toBe(4);
    expect(wire.count('raw-submit')).toBe(2);
  });

  it('counts a checkpoint once across its two phases and dies in the configured phase', () => {
    const after: number[] = [];
    const wire = new Tripwire({ point: 'checkpoint', n: 2, phase: 'after' }, () =>
      after.push(wire.count('checkpoint')),
    );
    wire.pass('checkpoint', 'before');
    wire.pass('checkpoint', 'after');
    wire.pass('checkpoint', 'before');
    expect(after).toEqual([]);
    wire.pass('checkpoint', 'after');
    expect(after).toEqual([2]);

    const before: number[] = [];
    const early = new Tripwire({ point: 'checkpoint', n: 1, phase: 'before' }, () =>
      before.push(1),
    );
    early.pass('checkpoint', 'before');
    expect(before).toEqual([1]);
    early.pass('checkpoint', 'after');
    expect(before).toEqual([1]);
  });

  it('tells whether the next occurrence is the fatal one', () => {
    const wire = new Tripwire({ point: 'coverage-write', n: 2 }, () => undefined);
    expect(wire.armedFor('coverage-write')).toBe(false);
    wire.pass('coverage-write');
    expect(wire.armedFor('coverage-write')).toBe(true);
    expect(wire.armedFor('raw-acked')).toBe(false);
    wire.pass('coverage-write');
    expect(wire.armedFor('coverage-write')).toBe(false);
  });

  it('only counts without a crash point', () => {
    const wire = new Tripwire(null, () => {
      throw new Error('must not die');
    });
    for (let i = 0; i < 5; i++) wire.pass('recovery-window');
    expect(wire.count('recovery-window')).toBe(5);
  });
});
