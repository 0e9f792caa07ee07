import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OffsetRuns } from '../src/index.js';

describe('OffsetRuns', () => {
  it('counts distinct offsets added in any order and any number of times, as a Set does', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 300 }), (offsets) => {
        const runs = new OffsetRuns();
        for (const o of offsets) runs.add(o);
        const distinct = [...new Set(offsets)].sort((a, b) => a - b);
        expect(runs.count).toBe(distinct.length);
        const flat = runs
          .runs()
          .flatMap(([s, e]) => Array.from({ length: e - s }, (_, i) => s + i));
        expect(flat).toEqual(distinct);
        // runs never touch: each is separated from the next by a missing offset
        for (const [i, [, e]] of runs.runs().entries()) {
          const next = runs.runs()[i + 1];
          if (next !== undefined) expect(next[0]).toBeGreaterThan(e);
        }
      }),
    );
  });

  it('merges another set, and offsets in order stay one run', () => {
    const a = new OffsetRuns();
    for (let o = 0; o < 1000; o++) a.add(o);
    expect(a.runs()).toEqual([[0, 1000]]);
    const b = new OffsetRuns();
    b.add(2000);
    b.add(999);
    b.add(1000);
    a.addAll(b);
    expect(a.runs()).toEqual([
      [0, 1001],
      [2000, 2001],
    ]);
    expect(a.count).toBe(1002);
  });
});
