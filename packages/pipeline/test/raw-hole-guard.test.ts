import { describe, expect, it } from 'vitest';
import { ManualClock, offsetSpan, sinkId, type HeldPartition } from '@thalweg/connector-core';
import { RangeSet } from '@thalweg/offset-store';
import { RawHoleGuard } from '../src/raw-hole-guard.js';

const raw = sinkId('raw');
const p0 = { topic: 't', partition: 0 };

/** Raw holding `held` of t/0, its coverage recording `recorded`. */
function guard(held: [number, number][], recorded: [number, number][]) {
  const parts: HeldPartition[] = [
    { partition: p0, spans: held.map(([s, e]) => offsetSpan('t', 0, s, e)) },
  ];
  return new RawHoleGuard(
    { id: raw, recovery: { kind: 'readable' } },
    { held: async () => parts },
    { covered: async () => RangeSet.of(recorded.map(([start, end]) => ({ start, end }))) },
  );
}

/** Settles the guard's pending reads (each a few promise turns). */
const turns = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('RawHoleGuard over a raw whose reads trail its acknowledgements', () => {
  const trailing = (visibleWithinMs: number, clock: ManualClock) => {
    let held: [number, number][] = [[0, 100]];
    const guard = new RawHoleGuard(
      { id: raw, recovery: { kind: 'readable', visibleWithinMs } },
      {
        held: async () => [
          { partition: p0, spans: held.map(([s, e]) => offsetSpan('t', 0, s, e)) },
        ],
      },
      { covered: async () => RangeSet.of([{ start: 0, end: 300 }]) },
      { clock, scheduler: clock },
    );
    return { guard, show: (spans: [number, number][]) => (held = spans) };
  };

  it('waits while what raw acknowledged is not readable yet, and passes once it shows', async () => {
    const clock = new ManualClock();
    const { guard, show } = trailing(60_000, clock);
    let passed = false;
    const checked = guard.check(p0, 300).then(() => (passed = true));
    await turns();
    await clock.elapse(5_000);
    await turns();
    expect(passed).toBe(false);
    show([[0, 300]]);
    await clock.elapse(1_000);
    await checked;
    expect(passed).toBe(true);
    expect(guard.pending(p0)).toBe(false);
  });

  it('refuses once it stayed unseen for visibleWithinMs, saying it waited', async () => {
    const clock = new ManualClock();
    const { guard } = trailing(3_000, clock);
    const checked = guard.check(p0, 300);
    const failed = expect(checked).rejects.toThrow('t/0 [100, 300) (still unseen after 3000 ms)');
    for (let i = 0; i < 4; i++) {
      await turns();
      await clock.elapse(1_000);
    }
    await failed;
  });
});

describe('RawHoleGuard', () => {
  it('refuses a position past a range raw recorded and no longer holds, naming the range', async () => {
    // A repair dropped [40000, 50000); the stored cursor is still at 50000.
    const g = guard([[0, 40000]], [[0, 50000]]);
    const refused = g.check(p0, 50000);
    await expect(refused).rejects.toMatchObject({ code: 'TWG_PIPELINE_RAW_HOLE' });
    await expect(refused).rejects.toThrow('t/0 [40000, 50000)');
    await expect(refused).rejects.toThrow('Rewind the source position to 40000');
    expect(g.pending(p0)).toBe(true);
  });

  it('lets the source resume at or before the hole: re-reading fills it', async () => {
    const g = guard([[0, 40000]], [[0, 50000]]);
    await g.check(p0, 40000);
    expect(g.pending(p0)).toBe(false);
    await guard([[0, 40000]], [[0, 50000]]).check(p0, 0);
  });

  it('refuses a position inside the hole (the part below it is never re-read), and names only holes below it', async () => {
    const g = guard(
      [
        [0, 10000],
        [20000, 30000],
      ],
      [[0, 50000]],
    );
    expect(await g.holesBelow(p0, 25000)).toEqual([{ start: 10000, end: 20000 }]);
    await expect(g.check(p0, 15000)).rejects.toThrow('t/0 [10000, 20000)');
  });

  it('passes a raw that holds all it recorded, and a fresh raw under an existing position', async () => {
    await guard([[0, 50000]], [[0, 50000]]).check(p0, 50000);
    await guard([], []).check(p0, 123456);
  });

  it('checks a partition taken again after a revocation', async () => {
    const g = guard([[0, 100]], [[0, 100]]);
    await g.check(p0, 100);
    expect(g.pending(p0)).toBe(false);
    g.forget(p0);
    expect(g.pending(p0)).toBe(true);
  });
});
