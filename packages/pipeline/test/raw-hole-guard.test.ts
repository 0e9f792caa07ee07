import { describe, expect, it } from 'vitest';
import { offsetSpan, sinkId, type HeldPartition } from '@thalweg/connector-core';
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
    { id: raw },
    { held: async () => parts },
    { covered: async () => RangeSet.of(recorded.map(([start, end]) => ({ start, end }))) },
  );
}

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
