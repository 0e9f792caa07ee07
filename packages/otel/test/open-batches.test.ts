import { offsetSpan } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { OpenBatches } from '../src/open-batches.js';

const P0 = { topic: 't', partition: 0 };
const P1 = { topic: 't', partition: 1 };

describe('OpenBatches', () => {
  it('finds the open batches a span overlaps, in its partition only', () => {
    const open = new OpenBatches<string>(10);
    open.add(offsetSpan('t', 0, 0, 10), 'a');
    open.add(offsetSpan('t', 0, 10, 20), 'b');
    open.add(offsetSpan('t', 1, 0, 10), 'c');
    expect(open.overlapping(P0, 5, 8).map((b) => b.value)).toEqual(['a']);
    expect(open.overlapping(P0, 9, 11).map((b) => b.value)).toEqual(['a', 'b']);
    expect(open.overlapping(P0, 20, 30)).toEqual([]);
    expect(open.overlapping(P1, 0, 1).map((b) => b.value)).toEqual(['c']);
  });

  it('a commit closes the batches wholly before it, in its partition only', () => {
    const open = new OpenBatches<string>(10);
    open.add(offsetSpan('t', 0, 0, 10), 'a');
    open.add(offsetSpan('t', 0, 10, 20), 'b');
    open.add(offsetSpan('t', 1, 0, 10), 'c');
    expect(open.commit(P0, 15)).toHaveLength(1);
    expect(open.commit(P0, 15)).toEqual([]);
    expect(open.size).toBe(2);
    expect(open.commit(P0, 20).map((b) => b.value)).toEqual(['b']);
    expect(open.commit({ topic: 'u', partition: 0 }, 100)).toEqual([]);
    expect(open.drain().map((b) => b.value)).toEqual(['c']);
    expect(open.size).toBe(0);
  });

  it('a partition read again from an earlier offset (a rebalance) is still committed by end', () => {
    const open = new OpenBatches<string>(10);
    open.add(offsetSpan('t', 0, 10, 20), 'late');
    open.add(offsetSpan('t', 0, 0, 10), 'again');
    expect(open.commit(P0, 10).map((b) => b.value)).toEqual(['again']);
    expect(open.overlapping(P0, 0, 100).map((b) => b.value)).toEqual(['late']);
  });

  it('past the cap lets the oldest of all partitions go, and counts it', () => {
    const open = new OpenBatches<string>(2);
    expect(open.add(offsetSpan('t', 0, 0, 10), 'a')).toBeUndefined();
    expect(open.add(offsetSpan('t', 1, 0, 10), 'b')).toBeUndefined();
    expect(open.add(offsetSpan('t', 0, 10, 20), 'c')?.value).toBe('a');
    expect(open.add(offsetSpan('t', 0, 20, 30), 'd')?.value).toBe('b');
    expect(open.size).toBe(2);
    expect(open.evicted).toBe(2);
    expect(open.overlapping(P0, 0, 100).map((b) => b.value)).toEqual(['c', 'd']);
    expect(open.overlapping(P1, 0, 100)).toEqual([]);
    // A commit after the eviction closes what is left, and nothing twice.
    expect(open.commit(P0, 30).map((b) => b.value)).toEqual(['c', 'd']);
    expect(open.size).toBe(0);
  });
});
