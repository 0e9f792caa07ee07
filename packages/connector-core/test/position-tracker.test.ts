import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PositionTracker } from '../src/position-tracker.js';
import { offsetSpan, type OffsetSpan } from '../src/offset-span.js';

const P = { topic: 'orders', partition: 0 };
const span = (start: number, end: number) => offsetSpan(P.topic, P.partition, start, end);

describe('PositionTracker', () => {
  it('advances only over a contiguous durable prefix', () => {
    const t = new PositionTracker();
    t.register(span(0, 10));
    t.register(span(10, 20));
    t.register(span(20, 30));
    expect(t.markDurable(span(10, 20))).toBeNull();
    expect(t.committable(P)).toBeNull();
    expect(t.markDurable(span(0, 10))).toBe(20);
    expect(t.pending(P)).toBe(1);
    expect(t.markDurable(span(20, 30))).toBe(30);
    expect(t.pending(P)).toBe(0);
  });

  it('skips offsets the source itself skipped (compaction, transaction markers)', () => {
    const t = new PositionTracker();
    t.register(span(0, 5));
    t.register(span(8, 12));
    t.markDurable(span(8, 12));
    expect(t.committable(P)).toBeNull();
    expect(t.markDurable(span(0, 5))).toBe(12);
  });

  it('refuses to acknowledge a span that was never registered', () => {
    const t = new PositionTracker();
    t.register(span(0, 10));
    expect(() => t.markDurable(span(0, 11))).toThrow(/never registered/);
    expect(() => t.markDurable(span(10, 20))).toThrow(/never registered/);
    expect(t.committable(P)).toBeNull();
  });

  it('refuses spans that go backwards', () => {
    const t = new PositionTracker();
    t.register(span(10, 20));
    expect(() => t.register(span(15, 25))).toThrow(/overlaps or precedes/);
    t.resumeAt({ topic: 'other', partition: 0 }, 100);
    expect(() => t.register(offsetSpan('other', 0, 50, 60))).toThrow(/precedes/);
  });

  it('forgets a revoked partition so nothing can be committed for it', () => {
    const t = new PositionTracker();
    t.register(span(0, 10));
    t.revoke(P);
    expect(() => t.markDurable(span(0, 10))).toThrow(/never registered/);
    expect(t.committable(P)).toBeNull();
  });

  it('resuming an idle partition moves the floor to the resume point, backwards too', () => {
    const t = new PositionTracker();
    t.register(span(0, 100));
    t.register(span(100, 200));
    t.markDurable(span(0, 100));
    t.markDurable(span(100, 200));
    // The source is sought back to the last checkpoint, behind what was committable.
    t.resumeAt(P, 100);
    expect(t.committable(P)).toBe(100);
    expect(() => t.register(span(100, 150))).not.toThrow();
    expect(t.markDurable(span(100, 150))).toBe(150);
  });

  it('resuming an idle partition ahead refuses spans before the resume point', () => {
    const t = new PositionTracker();
    t.register(span(0, 200));
    t.markDurable(span(0, 200));
    t.resumeAt(P, 300);
    expect(() => t.register(span(200, 250))).toThrow(/precedes/);
    expect(t.committable(P)).toBe(300);
    t.register(span(300, 310));
    expect(t.markDurable(span(300, 310))).toBe(310);
  });

  it('refuses a resume position that is not an offset, naming the field', () => {
    const t = new PositionTracker();
    for (const bad of [Number.NaN, -1, 1.5, 2 ** 53]) {
      expect(() => t.resumeAt(P, bad)).toThrow(/TWG_SPAN_INVALID: next:/);
    }
    expect(t.committable(P)).toBeNull();
  });

  it('never leads: the position is the end of the longest all-durable prefix', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 50 })), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.func(fc.integer()),
        (shape, order) => {
          const t = new PositionTracker();
          const spans: OffsetSpan[] = [];
          let at = 0;
          for (const [gap, len] of shape) {
            const s = span(at + gap, at + gap + len);
            t.register(s);
            spans.push(s);
            at = s.end;
          }
          const acks = [...spans].sort(
            (a, b) => order(a.start) - order(b.start) || a.start - b.start,
          );
          const durable = new Set<number>();
          for (const s of acks) {
            t.markDurable(s);
            durable.add(s.start);
            let expected: number | null = null;
            for (const r of spans) {
              if (!durable.has(r.start)) break;
              expected = r.end;
            }
            expect(t.committable(P)).toBe(expected);
            const firstPending = spans.find((r) => !durable.has(r.start));
            if (firstPending !== undefined && expected !== null) {
              expect(expected).toBeLessThanOrEqual(firstPending.start);
            }
          }
          expect(t.committable(P)).toBe(spans[spans.length - 1]?.end);
        },
      ),
    );
  });
});

describe('PositionTracker input checks', () => {
  it('refuses a hand-built span that is empty, inverted or unsafe', () => {
    const t = new PositionTracker();
    expect(() => t.register({ topic: 'orders', partition: 0, start: 10, end: 5 })).toThrow(
      /end: span \[10, 5\)/,
    );
    expect(() => t.register({ topic: 'orders', partition: 0, start: 0, end: Number.NaN })).toThrow(
      /end: NaN/,
    );
    expect(t.pending(P)).toBe(0);
  });
});
