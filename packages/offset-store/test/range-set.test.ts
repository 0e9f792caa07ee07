import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RangeSet } from '../src/range-set.js';
import { CoverageError } from '../src/errors.js';

const MAX = 200;
const range = fc
  .tuple(fc.integer({ min: 0, max: MAX - 1 }), fc.integer({ min: 1, max: 30 }))
  .map(([start, len]) => ({ start, end: Math.min(MAX, start + len) }));
const ranges = fc.array(range, { maxLength: 25 });

/** The reference model: the set of covered offsets, one by one. */
function model(rs: readonly { start: number; end: number }[]): Set<number> {
  const s = new Set<number>();
  for (const r of rs) for (let o = r.start; o < r.end; o++) s.add(o);
  return s;
}

function isNormal(set: RangeSet): boolean {
  const rs = set.ranges();
  return rs.every((r, i) => r.start < r.end && (i === 0 || rs[i - 1]!.end < r.start));
}

describe('RangeSet algebra', () => {
  it('union is commutative, associative and idempotent', () => {
    fc.assert(
      fc.property(ranges, ranges, ranges, (a, b, c) => {
        const [A, B, C] = [RangeSet.of(a), RangeSet.of(b), RangeSet.of(c)];
        expect(RangeSet.union(A, B).equals(RangeSet.union(B, A))).toBe(true);
        expect(
          RangeSet.union(RangeSet.union(A, B), C).equals(RangeSet.union(A, RangeSet.union(B, C))),
        ).toBe(true);
        expect(RangeSet.union(A, A).equals(A)).toBe(true);
      }),
    );
  });

  it('never claims an offset nobody recorded, and holds every offset recorded', () => {
    fc.assert(
      fc.property(ranges, (rs) => {
        const set = RangeSet.of(rs);
        const truth = model(rs);
        for (let o = 0; o <= MAX; o++) expect(set.contains(o)).toBe(truth.has(o));
        expect(set.offsetCount).toBe(truth.size);
      }),
    );
  });

  it('gaps and coverage partition the space below a bound', () => {
    fc.assert(
      fc.property(ranges, fc.nat(MAX), fc.nat(MAX), (rs, x, y) => {
        const [from, to] = x <= y ? [x, y] : [y, x];
        const set = RangeSet.of(rs);
        const gaps = set.gaps(from, to);
        const inGap = model(gaps);
        for (let o = from; o < to; o++) expect(inGap.has(o)).toBe(!set.contains(o));
        for (const o of inGap) expect(o >= from && o < to).toBe(true);
        // Gaps are themselves sorted, disjoint and non-touching.
        expect(isNormal(RangeSet.of(gaps))).toBe(true);
        expect(RangeSet.of(gaps).rangeCount).toBe(gaps.length);
      }),
    );
  });

  it('compaction (normal form) preserves the set and closes no gap', () => {
    fc.assert(
      fc.property(ranges, (rs) => {
        const set = RangeSet.of(rs);
        expect(isNormal(set)).toBe(true);
        expect(model(set.ranges())).toEqual(model(rs));
      }),
    );
  });

  it('union equals inserting everything into one set, in any order', () => {
    fc.assert(
      fc.property(ranges, ranges, (a, b) => {
        expect(
          RangeSet.union(RangeSet.of(a), RangeSet.of(b)).equals(RangeSet.of([...b, ...a])),
        ).toBe(true);
      }),
    );
  });

  it('merges touching ranges but keeps a one-offset gap open', () => {
    const set = RangeSet.of([
      { start: 0, end: 10 },
      { start: 10, end: 20 },
      { start: 21, end: 30 },
    ]);
    expect(set.ranges()).toEqual([
      { start: 0, end: 20 },
      { start: 21, end: 30 },
    ]);
    expect(set.gaps(0, 40)).toEqual([
      { start: 20, end: 21 },
      { start: 30, end: 40 },
    ]);
    expect(set.firstGapAt(0)).toBe(20);
    expect(set.covers(0, 20)).toBe(true);
    expect(set.covers(0, 21)).toBe(false);
  });

  it('reports whether an insert added anything', () => {
    const set = RangeSet.of([{ start: 5, end: 10 }]);
    expect(set.add(6, 9)).toBe(false);
    expect(set.add(5, 10)).toBe(false);
    expect(set.add(9, 11)).toBe(true);
  });

  it.each([
    [5, 5, /range\.end: \[5, 5\)/],
    [6, 5, /range\.end: \[6, 5\)/],
    [-1, 5, /range\.start: -1/],
    [0, 2 ** 53, /range\.end/],
    [0.5, 3, /range\.start: 0\.5/],
  ])('refuses [%s, %s) and changes nothing', (start, end, message) => {
    const set = RangeSet.of([{ start: 0, end: 3 }]);
    expect(() => set.add(start, end)).toThrow(CoverageError);
    expect(() => set.add(start, end)).toThrow(message);
    expect(set.ranges()).toEqual([{ start: 0, end: 3 }]);
  });
});
