import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OffsetRuns } from '../src/offset-runs.js';

/** The runs of a set of offsets, the slow way. */
function bruteRuns(spans: readonly [number, number][]): { start: number; end: number }[] {
  const held = new Set<number>();
  for (const [start, end] of spans) for (let o = start; o < end; o++) held.add(o);
  const sorted = [...held].sort((a, b) => a - b);
  const runs: { start: number; end: number }[] = [];
  for (const o of sorted) {
    const last = runs.at(-1);
    if (last?.end === o) last.end = o + 1;
    else runs.push({ start: o, end: o + 1 });
  }
  return runs;
}

describe('OffsetRuns', () => {
  it('merges overlapping and touching spans in any order', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc
            .tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 30 }))
            .map(([start, length]): [number, number] => [start, start + length]),
          { maxLength: 40 },
        ),
        fc.integer({ min: 0, max: 230 }),
        fc.integer({ min: 0, max: 230 }),
        (spans, a, b) => {
          const runs = new OffsetRuns();
          for (const [start, end] of spans) runs.add(start, end);
          expect(runs.list()).toEqual(bruteRuns(spans));
          const [from, to] = a <= b ? [a, b] : [b, a];
          const clipped = bruteRuns(spans)
            .map((r) => ({ start: Math.max(r.start, from), end: Math.min(r.end, to) }))
            .filter((r) => r.start < r.end);
          expect(runs.list(from, to)).toEqual(clipped);
        },
      ),
    );
  });
});
