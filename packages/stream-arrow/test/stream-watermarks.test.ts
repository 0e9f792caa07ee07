import { describe, expect, expectTypeOf, it } from 'vitest';
import { StreamWatermarks, type DeliveredOffset } from '../src/stream-watermarks.js';

describe('StreamWatermarks', () => {
  it('tracks pending = submitted - delivered', () => {
    const w = new StreamWatermarks();
    expect(w.pending).toBe(0);
    w.submitted(0);
    w.submitted(1);
    w.submitted(2);
    expect(w.pending).toBe(3);
    w.delivered(1);
    expect(w.pending).toBe(1);
    expect(w.deliveredHighWater).toBe(1);
    expect(w.submittedHighWater).toBe(2);
  });

  it('never lets delivered pass submitted or move back', () => {
    const w = new StreamWatermarks();
    w.submitted(0);
    expect(() => w.delivered(1)).toThrow(/beyond the submitted high-water 0/);
    w.delivered(0);
    w.submitted(1);
    w.delivered(0);
    expect(w.deliveredHighWater).toBe(0);
    expect(() => w.submitted(1)).toThrow(/above the submitted high-water 1/);
  });

  it('keeps submitted out of anything that takes a delivered offset', () => {
    const w = new StreamWatermarks();
    const decideDurability = (upTo: DeliveredOffset) => upTo;
    expectTypeOf(decideDurability).parameter(0).toEqualTypeOf<DeliveredOffset>();
    // @ts-expect-error the submitted high-water cannot decide durability
    decideDurability(w.submittedHighWater);
    expect(decideDurability(w.deliveredHighWater)).toBe(-1);
  });
});
