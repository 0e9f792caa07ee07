import { describe, expect, it } from 'vitest';
import { offsetSpan, sourcePartition } from '@thalweg/connector-core';
import { PendingSpans } from '../src/secondary-pending.js';

const P = sourcePartition('t', 0);
const span = (start: number, end: number) => offsetSpan('t', 0, start, end);

describe('PendingSpans', () => {
  it('keeps the lowest start held, queued or submitted, until it settles', () => {
    const p = new PendingSpans();
    expect(p.floor(P)).toBeNull();
    p.hold(span(10, 20));
    p.hold(span(20, 30));
    expect(p.floor(P)).toBe(10);
    p.settle(span(10, 20));
    expect(p.floor(P)).toBe(20);
    expect(p.floor(sourcePartition('t', 1))).toBeNull();
  });

  it('settles the spans submitted before a confirmed one: the sink settled them without a confirmation', () => {
    const p = new PendingSpans();
    for (const s of [span(0, 10), span(10, 20), span(20, 30)]) {
      p.hold(s);
      p.submitting(s);
    }
    // 0..10 was skipped by the sink (a poison gap); 10..20 is the first confirmation.
    p.settleThrough(span(10, 20));
    expect(p.floor(P)).toBe(20);
    p.settleThrough(span(20, 30));
    expect(p.floor(P)).toBeNull();
  });

  it('counts a span held twice (a replay beside the live lane) until both settle', () => {
    const p = new PendingSpans();
    p.hold(span(0, 10));
    p.hold(span(0, 10));
    p.settle(span(0, 10));
    expect(p.floor(P)).toBe(0);
    p.settle(span(0, 10));
    expect(p.floor(P)).toBeNull();
  });

  it('forgets everything once cleared (the lane failed)', () => {
    const p = new PendingSpans();
    p.hold(span(0, 10));
    p.submitting(span(0, 10));
    p.clear();
    expect(p.floor(P)).toBeNull();
  });
});
