import { describe, expect, it } from 'vitest';
import { offsetSpan, sourcePartition } from '@thalweg/connector-core';
import { PendingSpans } from '../src/secondary-pending.js';
import { makeRecords } from './doubles/memory-sources.js';

const P = sourcePartition('t', 0);
const span = (start: number, end: number) => offsetSpan('t', 0, start, end);
const batch = (s: ReturnType<typeof span>) => ({
  span: s,
  records: makeRecords('t', 0, s.end).slice(s.start),
});

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
      p.submitting(batch(s));
    }
    // 0..10 was settled by the sink without a word; 10..20 is the first confirmation.
    expect(p.settleThrough(span(10, 20))?.records.map((r) => r.offset)).toEqual([
      10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ]);
    expect(p.floor(P)).toBe(20);
    expect(p.unsettled).toBe(1);
    p.settleThrough(span(20, 30));
    expect(p.floor(P)).toBeNull();
    expect(p.unsettled).toBe(0);
    // A span the lane never submitted (a replay's): settled, no batch.
    expect(p.settleThrough(span(40, 50))).toBeNull();
  });

  it('hands back the batch of a submit the sink refused, and forgets it', () => {
    const p = new PendingSpans();
    for (const s of [span(0, 10), span(10, 20)]) {
      p.hold(s);
      p.submitting(batch(s));
    }
    expect(p.refused(span(10, 20))?.span).toEqual(span(10, 20));
    expect(p.unsettled).toBe(1);
    expect(p.floor(P)).toBe(0);
    expect(p.refused(span(10, 20))).toBeNull();
    p.settleThrough(span(0, 10));
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
    p.submitting(batch(span(0, 10)));
    p.clear();
    expect(p.floor(P)).toBeNull();
  });
});
