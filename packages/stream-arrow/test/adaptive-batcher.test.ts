import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveBatcher, ArrowBatchError, type FlushedBatch } from '../src/index.js';

/** A clock that moves only when the test says so. */
class TestClock {
  constructor(public time = 1000) {}
  now(): number {
    return this.time;
  }
}

const limits = { maxRows: 10, maxBytes: 1000, maxAgeMs: 500 };

function fill(b: AdaptiveBatcher<number>, count: number, bytes: number): FlushedBatch<number>[] {
  const out: FlushedBatch<number>[] = [];
  for (let i = 0; i < count; i++) out.push(...b.add(i, bytes));
  return out;
}

describe('AdaptiveBatcher', () => {
  it('flushes on rows', () => {
    const b = new AdaptiveBatcher<number>(limits, new TestClock());
    expect(fill(b, 9, 1)).toEqual([]);
    const [batch] = b.add(9, 1);
    expect(batch?.reason).toBe('rows');
    expect(batch?.items).toHaveLength(10);
    expect(b.bufferedRows).toBe(0);
  });

  it('flushes on bytes before a record would pass the target', () => {
    const b = new AdaptiveBatcher<string>(limits, new TestClock());
    expect(b.add('a', 400)).toEqual([]);
    expect(b.add('b', 400)).toEqual([]);
    const [full] = b.add('c', 300);
    expect([full?.reason, full?.items, full?.bytes]).toEqual(['bytes', ['a', 'b'], 800]);
    expect(b.bufferedBytes).toBe(300);
    const [exact] = b.add('d', 700);
    expect([exact?.reason, exact?.items, exact?.bytes]).toEqual(['bytes', ['c', 'd'], 1000]);
  });

  it('sends a record larger than the target alone', () => {
    const b = new AdaptiveBatcher<string>(limits, new TestClock());
    b.add('small', 10);
    const out = b.add('huge', 5000);
    expect(out.map((x) => [x.reason, x.items])).toEqual([
      ['bytes', ['small']],
      ['bytes', ['huge']],
    ]);
  });

  it('flushes on age, from the injected clock only', () => {
    const clock = new TestClock();
    const b = new AdaptiveBatcher<string>(limits, clock);
    expect(b.deadline).toBeUndefined();
    b.add('a', 1);
    expect(b.deadline).toBe(1500);
    clock.time = 1499;
    expect(b.poll()).toBeUndefined();
    clock.time = 1500;
    const aged = b.poll();
    expect([aged?.reason, aged?.items, aged?.openedAt, aged?.flushedAt]).toEqual([
      'age',
      ['a'],
      1000,
      1500,
    ]);
    expect(b.poll()).toBeUndefined();
  });

  it('ages out exactly at its deadline on a fractional clock (performance.now())', () => {
    // 7411.777123613739 + 1000 rounds down: 8411.777123613738 - 7411.777123613739
    // is 999.9999999999991, just short of maxAgeMs.
    const clock = new TestClock(7411.777123613739);
    const b = new AdaptiveBatcher<string>({ ...limits, maxAgeMs: 1000 }, clock);
    b.add('a', 1);
    clock.time = b.deadline!;
    expect(b.poll()?.reason).toBe('age');
    b.add('b', 1);
    clock.time = b.deadline!;
    expect(b.add('c', 1).map((x) => [x.reason, x.items])).toEqual([['age', ['b']]]);
  });

  it('ages out a stale batch on add, before the new record joins it', () => {
    const clock = new TestClock();
    const b = new AdaptiveBatcher<string>(limits, clock);
    b.add('old', 1);
    clock.time += 10_000;
    const [stale] = b.add('new', 1);
    expect([stale?.reason, stale?.items]).toEqual(['age', ['old']]);
    expect(b.bufferedRows).toBe(1);
    expect(b.deadline).toBe(clock.time + 500);
  });

  it('applies a changed factor at the next batch, not the open one', () => {
    const b = new AdaptiveBatcher<number>(limits, new TestClock());
    fill(b, 4, 1);
    b.setFactor(0.5);
    expect(b.factor).toBe(0.5);
    const first = fill(b, 6, 1);
    expect(first.map((x) => [x.items.length, x.factor, x.targetRows])).toEqual([[10, 1, 10]]);
    const second = fill(b, 5, 1);
    expect(second.map((x) => [x.items.length, x.factor, x.targetRows, x.targetBytes])).toEqual([
      [5, 0.5, 5, 500],
    ]);
    b.setFactor(0.25);
    expect(b.add(0, 200)).toEqual([]);
    expect(b.add(1, 100).map((x) => [x.reason, x.items, x.bytes, x.targetBytes])).toEqual([
      ['bytes', [0], 200, 250],
    ]);
  });

  it('drains what is open', () => {
    const b = new AdaptiveBatcher<number>(limits, new TestClock());
    expect(b.drain()).toBeUndefined();
    b.add(1, 5);
    expect(b.drain()?.reason).toBe('drain');
    expect(b.bufferedBytes).toBe(0);
  });

  it('refuses limits, factors and sizes out of range, naming the field', () => {
    const clock = new TestClock();
    const field = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        if (error instanceof ArrowBatchError) return [error.code, error.field];
      }
      return 'accepted';
    };
    expect(field(() => new AdaptiveBatcher({ ...limits, maxRows: 0 }, clock))).toEqual([
      'TWG_ARROW_BATCHER_CONFIG',
      'maxRows',
    ]);
    expect(field(() => new AdaptiveBatcher({ ...limits, maxBytes: 1.5 }, clock))[1]).toBe(
      'maxBytes',
    );
    expect(field(() => new AdaptiveBatcher({ ...limits, maxAgeMs: -1 }, clock))[1]).toBe(
      'maxAgeMs',
    );
    const b = new AdaptiveBatcher<number>(limits, clock);
    for (const factor of [0, -0.5, 1.01, Number.NaN])
      expect(field(() => b.setFactor(factor))[1]).toBe('factor');
    expect(field(() => b.add(1, -1))[1]).toBe('bytes');
  });

  it('keeps order and accounts every byte exactly once, whatever happens', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), bytes: fc.integer({ min: 0, max: 1500 }) }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 400 }) }),
      fc.record({
        kind: fc.constant('factor' as const),
        f: fc.double({ min: 0.01, max: 1, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const clock = new TestClock();
        const b = new AdaptiveBatcher<number>(limits, clock);
        const out: FlushedBatch<number>[] = [];
        const added: number[] = [];
        const sizes: number[] = [];
        for (const s of steps) {
          if (s.kind === 'add') {
            sizes.push(s.bytes);
            added.push(added.length);
            out.push(...b.add(added.length - 1, s.bytes));
          } else if (s.kind === 'tick') {
            clock.time += s.ms;
            const aged = b.poll();
            if (aged !== undefined) out.push(aged);
          } else b.setFactor(s.f);
        }
        const last = b.drain();
        if (last !== undefined) out.push(last);
        expect(out.flatMap((x) => x.items)).toEqual(added);
        expect(out.reduce((sum, x) => sum + x.bytes, 0)).toBe(sizes.reduce((a, c) => a + c, 0));
        for (const batch of out) {
          expect(batch.items.length).toBeGreaterThan(0);
          expect(batch.items.length).toBeLessThanOrEqual(batch.targetRows);
          expect(batch.bytes).toBe(batch.items.reduce((sum, i) => sum + sizes[i]!, 0));
          if (batch.items.length > 1) expect(batch.bytes).toBeLessThanOrEqual(batch.targetBytes);
          expect(batch.flushedAt - batch.openedAt).toBeLessThanOrEqual(limits.maxAgeMs + 400);
        }
      }),
      { numRuns: 300 },
    );
  });
});
