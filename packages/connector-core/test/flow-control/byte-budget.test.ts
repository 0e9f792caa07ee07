import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteBudget, type AcquireOutcome } from '../../src/flow-control/byte-budget.js';
import { parseByteBudgetConfig } from '../../src/flow-control/byte-budget-config.js';
import { ManualClock } from '../../src/flow-control/clock.js';
import { FlowControlError } from '../../src/flow-control/flow-control-errors.js';
import { QuarantineLane } from '../../src/flow-control/quarantine-lane.js';
import { parseQuarantineLaneConfig } from '../../src/flow-control/quarantine-lane-config.js';

const noWarmUp = { warmUp: { fraction: 1 } };

function budgetOf(bytes: number, extra: object = noWarmUp, clock = new ManualClock()) {
  return new ByteBudget(parseByteBudgetConfig({ bytes, ...extra }), clock);
}

/** Lets every queued promise callback run, without involving time. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** What a sink's ack stream looks like to the pipeline: values arrive later. */
class AckStream {
  private readonly buffered: number[] = [];
  private waiting: ((bytes: number) => void) | null = null;

  push(bytes: number): void {
    const w = this.waiting;
    this.waiting = null;
    if (w !== null) w(bytes);
    else this.buffered.push(bytes);
  }

  next(): Promise<number> {
    const b = this.buffered.shift();
    if (b !== undefined) return Promise.resolve(b);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}

/** A sink that acknowledges every write a microtask later. */
function fakeSink(acks: AckStream) {
  const written: number[] = [];
  return {
    written,
    write(bytes: number) {
      written.push(bytes);
      queueMicrotask(() => acks.push(bytes));
    },
  };
}

describe('ByteBudget: the uncontended path', () => {
  it('grants synchronously while there is room and releases on ack', () => {
    const b = budgetOf(100);
    expect(b.tryAcquire(60)).toEqual({ kind: 'granted' });
    expect(b.tryAcquire(40)).toEqual({ kind: 'granted' });
    expect(b.tryAcquire(1)).toEqual({ kind: 'wait' });
    expect(b.stats()).toMatchObject({ inFlightBytes: 100, saturation: 1 });
    b.release(60);
    expect(b.tryAcquire(60)).toEqual({ kind: 'granted' });
    expect(b.stats().acks).toBe(1);
  });

  it('only an oversized answer carries a grantable size (a discriminated union)', () => {
    const a = budgetOf(100).tryAcquire(500);
    // @ts-expect-error `grantable` is not on every admission
    expect(a.grantable).toBe(100);
    if (a.kind === 'oversized') expect(a.grantable).toBe(100);
  });

  it('refuses amounts that are not positive integers, and releases of bytes never taken', () => {
    const b = budgetOf(100);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => b.tryAcquire(bad)).toThrow(/TWG_BUDGET_AMOUNT_INVALID/);
    }
    b.tryAcquire(10);
    expect(() => b.release(11)).toThrow(/TWG_BUDGET_OVER_RELEASE/);
    expect(b.stats().inFlightBytes).toBe(10);
  });
});

describe('ByteBudget: no deadlock between admission and acks', () => {
  const RECORDS = Array.from({ length: 200 }, (_, i) => 20 + (i % 7) * 10);

  it('a full budget makes progress when acquire is raced with ack processing', async () => {
    // Would hang (and time the test out) if a pending acquire were not granted
    // by a release made while it is pending.
    const budget = budgetOf(100);
    const acks = new AckStream();
    const sink = fakeSink(acks);
    let pendingAck = acks.next();
    let raced = 0;
    for (const cost of RECORDS) {
      if (budget.tryAcquire(cost).kind !== 'granted') {
        const acquiring = budget.acquire(cost);
        for (;;) {
          raced += 1;
          const won = await Promise.race([
            acquiring.then((outcome) => ({ arm: 'acquired' as const, outcome })),
            pendingAck.then((bytes) => ({ arm: 'ack' as const, bytes })),
          ]);
          if (won.arm === 'acquired') {
            expect(won.outcome.kind).toBe('granted');
            break;
          }
          budget.release(won.bytes);
          pendingAck = acks.next();
        }
      }
      sink.write(cost);
    }
    while (budget.stats().inFlightBytes > 0) {
      budget.release(await pendingAck);
      pendingAck = acks.next();
    }
    expect(sink.written).toEqual(RECORDS);
    expect(raced).toBeGreaterThan(0);
    expect(budget.stats()).toMatchObject({ inFlightBytes: 0, waiters: 0, acks: RECORDS.length });
  });

  it('the same loop awaiting acquire alone stalls for good (the deadlock the race prevents)', async () => {
    const budget = budgetOf(100);
    const acks = new AckStream();
    const sink = fakeSink(acks);
    const progress = { finished: false };
    const naive = (async () => {
      for (const cost of RECORDS) {
        await budget.acquire(cost); // acks are only read after this returns: never
        sink.write(cost);
      }
      progress.finished = true;
    })();
    await settle();
    expect(progress.finished).toBe(false);
    expect(budget.stats().waiters).toBe(1);
    expect(sink.written.length).toBeLessThan(RECORDS.length);
    // Unblock it so no promise outlives the test.
    while (!progress.finished) {
      budget.release(await acks.next());
      await settle();
    }
    await naive;
  });
});

describe('ByteBudget: warm-up', () => {
  const warm = { warmUp: { fraction: 0.25, acks: 3, timeoutMs: 10_000 } };

  it('grants a fraction of the budget until N acks, then all of it', () => {
    const b = budgetOf(1_000, warm);
    expect(b.stats()).toMatchObject({ limitBytes: 250, warmingUp: true });
    expect(b.tryAcquire(200).kind).toBe('granted');
    expect(b.tryAcquire(100).kind).toBe('wait');
    b.release(100, 'abandoned'); // does not count as an ack
    b.tryAcquire(100);
    b.release(50);
    b.release(50);
    expect(b.stats().warmingUp).toBe(true);
    b.tryAcquire(10);
    b.release(10);
    expect(b.stats()).toMatchObject({ limitBytes: 1_000, warmingUp: false, acks: 3 });
  });

  it('opens the full budget once a warm-up window of bytes is acknowledged, however few the acks', () => {
    const b = budgetOf(1_000, { warmUp: { fraction: 0.25, acks: 1_000, timeoutMs: 10_000 } });
    b.tryAcquire(200);
    b.release(200);
    b.tryAcquire(100);
    b.release(40, 'abandoned'); // abandoned bytes prove nothing
    expect(b.stats()).toMatchObject({ limitBytes: 250, warmingUp: true, acks: 1 });
    b.release(50);
    expect(b.stats()).toMatchObject({ limitBytes: 1_000, warmingUp: false, acks: 2 });
  });

  it('opens the full budget on timeout, granting waiters on the next tick', async () => {
    const clock = new ManualClock();
    const b = budgetOf(1_000, warm, clock);
    b.tryAcquire(250);
    const pending = b.acquire(200);
    clock.advance(9_999);
    b.tick();
    await settle();
    expect(b.stats().waiters).toBe(1);
    clock.advance(1);
    b.tick();
    await expect(pending).resolves.toEqual({ kind: 'granted' });
    expect(b.stats()).toMatchObject({ limitBytes: 1_000, inFlightBytes: 450 });
  });

  it('a request that finds the warm-up timed out grants the waiters first, then itself', async () => {
    const clock = new ManualClock();
    const b = budgetOf(1_000, warm, clock);
    b.tryAcquire(200);
    const pending = b.acquire(100); // 300 > 250: waits
    clock.advance(10_000);
    // No tick and no release yet: the next request ends the warm-up itself.
    expect(b.tryAcquire(50)).toEqual({ kind: 'granted' });
    await expect(pending).resolves.toEqual({ kind: 'granted' });
    expect(b.stats()).toMatchObject({ limitBytes: 1_000, waiters: 0, inFlightBytes: 350 });
  });

  it('judges oversized against what can be granted now: during warm-up, a fraction', () => {
    const b = budgetOf(1_000, warm);
    expect(b.tryAcquire(300)).toEqual({ kind: 'oversized', bytes: 300, grantable: 250 });
    expect(b.stats()).toMatchObject({ oversized: 1, inFlightBytes: 0 });
  });
});

describe('ByteBudget: oversized records go to quarantine instead of stalling', () => {
  it('an oversized record is reported, routed to quarantine, and the records behind it flow', async () => {
    const b = budgetOf(1_000);
    const q = new QuarantineLane<string>(parseQuarantineLaneConfig({ capacity: 10 }));
    const clean: string[] = [];
    const input: [string, number][] = [
      ['a', 100],
      ['huge', 5_000],
      ['b', 100],
      ['c', 100],
    ];
    for (const [id, cost] of input) {
      const outcome: AcquireOutcome = await b.acquire(cost);
      if (outcome.kind === 'oversized') {
        expect(outcome).toEqual({ kind: 'oversized', bytes: 5_000, grantable: 1_000 });
        q.offer({
          reason: 'oversized',
          record: id,
          bytes: 0,
          detail: `${cost} > ${outcome.grantable}`,
        });
        continue;
      }
      clean.push(id);
    }
    expect(clean).toEqual(['a', 'b', 'c']);
    expect(q.drain().map((e) => [e.reason, e.record])).toEqual([['oversized', 'huge']]);
    expect(b.stats()).toMatchObject({ inFlightBytes: 300, oversized: 1 });
  });
});

describe('ByteBudget: fairness and cancellation', () => {
  it('grants strictly first-come, so a large waiter is not starved by small ones', async () => {
    const b = budgetOf(100);
    b.tryAcquire(90);
    const order: string[] = [];
    const big = b.acquire(100).then(() => order.push('big'));
    expect(b.tryAcquire(5)).toEqual({ kind: 'wait' }); // 10 free, but someone is waiting
    const small = b.acquire(5).then(() => order.push('small'));
    b.release(90);
    await big;
    await settle();
    expect(order).toEqual(['big']);
    b.release(100);
    await small;
    expect(order).toEqual(['big', 'small']);
  });

  it('an aborted acquire takes nothing and lets the waiters behind it through', async () => {
    const b = budgetOf(100);
    b.tryAcquire(60);
    const ac = new AbortController();
    const big = b.acquire(80, ac.signal);
    const small = b.acquire(30);
    expect(b.stats()).toMatchObject({ waiters: 2, waitingBytes: 110, inFlightBytes: 60 });
    ac.abort(new Error('shutting down'));
    const err = await big.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlowControlError);
    expect(err).toMatchObject({ code: 'TWG_BUDGET_ACQUIRE_ABORTED', errorClass: 'transient' });
    await expect(small).resolves.toEqual({ kind: 'granted' });
    expect(b.stats()).toMatchObject({ waiters: 0, waitingBytes: 0, inFlightBytes: 90 });
  });

  it('an abort after the grant changes nothing: the caller holds the permits', async () => {
    const b = budgetOf(100);
    b.tryAcquire(100);
    const ac = new AbortController();
    const p = b.acquire(50, ac.signal);
    b.release(100);
    await expect(p).resolves.toEqual({ kind: 'granted' });
    ac.abort();
    expect(b.stats().inFlightBytes).toBe(50);
  });

  it('an already aborted signal takes nothing even when there is room', async () => {
    const b = budgetOf(100);
    const p = b.acquire(10, AbortSignal.abort());
    await expect(p).rejects.toMatchObject({ code: 'TWG_BUDGET_ACQUIRE_ABORTED' });
    expect(b.stats().inFlightBytes).toBe(0);
  });

  it('keeps its accounting under any interleaving of grants, releases and aborts (property)', async () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('acquire' as const), bytes: fc.integer({ min: 1, max: 120 }) }),
      fc.record({ op: fc.constant('release' as const), index: fc.nat() }),
      fc.record({ op: fc.constant('abort' as const), index: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const b = budgetOf(100);
        const held: number[] = [];
        const pending: { bytes: number; ac: AbortController; done: boolean }[] = [];
        const grantOrder: number[] = [];
        let seq = 0;
        for (const o of ops) {
          if (o.op === 'acquire') {
            const entry = { bytes: o.bytes, ac: new AbortController(), done: false, seq: seq++ };
            pending.push(entry);
            b.acquire(o.bytes, entry.ac.signal).then(
              (r) => {
                entry.done = true;
                if (r.kind === 'granted') {
                  held.push(entry.bytes);
                  grantOrder.push(entry.seq);
                }
              },
              () => (entry.done = true),
            );
          } else if (o.op === 'release' && held.length > 0) {
            b.release(held.splice(o.index % held.length, 1)[0]!);
          } else if (o.op === 'abort') {
            const live = pending.filter((p) => !p.done);
            live[o.index % Math.max(1, live.length)]?.ac.abort();
          }
          await settle();
          const s = b.stats();
          expect(s.inFlightBytes).toBeLessThanOrEqual(s.limitBytes);
          expect(s.inFlightBytes).toBe(held.reduce((a, x) => a + x, 0));
          expect(s.waiters).toBe(pending.filter((p) => !p.done).length);
        }
        expect(grantOrder).toEqual([...grantOrder].sort((x, y) => x - y));
        for (const p of pending) p.ac.abort();
        await settle();
      }),
      { numRuns: 150 },
    );
  });
});

describe('ByteBudget.acquire input', () => {
  it('rejects (never throws) a bad amount, and takes nothing', async () => {
    const budget = budgetOf(100);
    let threw = false;
    let p: Promise<unknown> = Promise.resolve();
    try {
      p = budget.acquire(Number.NaN);
    } catch {
      threw = true;
    }
    expect(threw).toBe(false);
    await expect(p).rejects.toMatchObject({ code: 'TWG_BUDGET_AMOUNT_INVALID' });
    expect(budget.stats().inFlightBytes).toBe(0);
  });
});
