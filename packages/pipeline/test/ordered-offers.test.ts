import { describe, expect, it } from 'vitest';
import { OrderedOffers } from '../src/ordered-offers.js';

/** A promise and the functions that settle it. */
function deferred<T>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('OrderedOffers', () => {
  it('acts on results in the order the work was offered, whatever order it finishes in', async () => {
    const seen: number[] = [];
    const offers = new OrderedOffers<number>(8, () => undefined);
    const work = [deferred<number>(), deferred<number>(), deferred<number>()];
    for (const w of work) await offers.offer(w.promise, (n) => seen.push(n));
    work[2]?.resolve(3);
    work[1]?.resolve(2);
    await Promise.resolve();
    expect(seen).toEqual([]);
    work[0]?.resolve(1);
    await offers.drained();
    expect(seen).toEqual([1, 2, 3]);
  });

  it('makes the offerer wait once more than the limit are outstanding', async () => {
    const offers = new OrderedOffers<number>(1, () => undefined);
    const a = deferred<number>();
    await offers.offer(a.promise, () => undefined);
    let second = false;
    const waiting = offers.offer(Promise.resolve(2), () => undefined).then(() => (second = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(second).toBe(false);
    a.resolve(1);
    await waiting;
    expect(second).toBe(true);
  });

  it('reports a failed work item and goes on with the next', async () => {
    const errors: unknown[] = [];
    const seen: number[] = [];
    const offers = new OrderedOffers<number>(8, (e) => errors.push(e));
    await offers.offer(Promise.reject(new Error('lookup broke')), (n) => seen.push(n));
    await offers.offer(Promise.resolve(2), (n) => seen.push(n));
    await offers.drained();
    expect(seen).toEqual([2]);
    expect(errors).toHaveLength(1);
  });
});
