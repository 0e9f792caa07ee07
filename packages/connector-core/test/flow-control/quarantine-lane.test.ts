import { describe, expect, expectTypeOf, it } from 'vitest';
import { ByteBudget } from '../../src/flow-control/byte-budget.js';
import { parseByteBudgetConfig } from '../../src/flow-control/byte-budget-config.js';
import { ManualClock } from '../../src/flow-control/clock.js';
import {
  QUARANTINE_REASONS,
  QuarantineLane,
  type QuarantineOffer,
  type QuarantineReason,
  type QuarantineShed,
} from '../../src/flow-control/quarantine-lane.js';
import { parseQuarantineLaneConfig } from '../../src/flow-control/quarantine-lane-config.js';

function lane(capacity: number, maxBytes = 1_000_000, onShed?: (e: QuarantineShed) => void) {
  return new QuarantineLane<number>(
    parseQuarantineLaneConfig({ capacity, maxBytes }),
    onShed === undefined ? {} : { onShed },
  );
}

interface Outcome {
  readonly cleanWritten: number[];
  readonly quarantined: number;
}

/**
 * One pass of a clean lane. Deliberately a plain function, not async: it
 * cannot wait on anything, quarantine included. Every 4th record is bad and
 * goes to quarantine with a reason cycling through all of them.
 */
function runCleanLane(
  records: number,
  q: QuarantineLane<number>,
  budget: ByteBudget,
  quarantineWriter: () => void = () => undefined,
): Outcome {
  const cleanWritten: number[] = [];
  let quarantined = 0;
  for (let id = 0; id < records; id++) {
    if (id % 4 === 3) {
      const reason = QUARANTINE_REASONS[quarantined % QUARANTINE_REASONS.length]!;
      const result = q.offer({ reason, record: id, bytes: 10 });
      // A plain value, not a thenable: there is nothing for the clean lane to wait on.
      expect(typeof result).toBe('string');
      quarantined += 1;
      quarantineWriter();
      continue;
    }
    expect(budget.tryAcquire(100).kind).toBe('granted');
    cleanWritten.push(id);
    budget.release(100); // the clean sink acknowledges
  }
  return { cleanWritten, quarantined };
}

describe('QuarantineLane', () => {
  it('queues up to capacity, then sheds the newcomer and counts it by reason', () => {
    const events: QuarantineShed[] = [];
    const q = lane(2, 1_000, (e) => events.push(e));
    expect(q.offer({ reason: 'decode', record: 1, bytes: 1 })).toBe('queued');
    expect(q.offer({ reason: 'dq', record: 2, bytes: 1 })).toBe('queued');
    expect(q.offer({ reason: 'contract', record: 3, bytes: 1 })).toBe('shed');
    expect(q.offer({ reason: 'contract', record: 4, bytes: 1 })).toBe('shed');
    expect(events).toEqual([
      { reason: 'contract', shedForReason: 1, shedTotal: 1 },
      { reason: 'contract', shedForReason: 2, shedTotal: 2 },
    ]);
    expect(q.drain().map((e) => e.record)).toEqual([1, 2]);
    expect(q.offer({ reason: 'retry-exhausted', record: 5, bytes: 1 })).toBe('queued');
  });

  it('sheds by bytes as well as by count', () => {
    const q = lane(100, 50);
    expect(q.offer({ reason: 'decode', record: 1, bytes: 40 })).toBe('queued');
    expect(q.offer({ reason: 'decode', record: 2, bytes: 11 })).toBe('shed');
    expect(q.offer({ reason: 'decode', record: 3, bytes: 10 })).toBe('queued');
    expect(q.stats()).toMatchObject({ depth: 2, heldBytes: 50, shedTotal: 1 });
    expect(() => q.offer({ reason: 'decode', record: 4, bytes: Number.NaN })).toThrow(
      /TWG_BUDGET_AMOUNT_INVALID/,
    );
  });

  it('hands an entry straight to a waiting writer, and the writer can stop waiting', async () => {
    const q = lane(1);
    const taken = q.take();
    expect(q.offer({ reason: 'dq', record: 7, bytes: 1 })).toBe('queued');
    await expect(taken).resolves.toMatchObject({ record: 7 });
    const ac = new AbortController();
    const waiting = q.take(ac.signal);
    ac.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'TWG_QUARANTINE_WAIT_ABORTED' });
    expect(q.offer({ reason: 'dq', record: 8, bytes: 1 })).toBe('queued');
    expect(q.poll()?.record).toBe(8);
  });

  it('an offer can never be awaited: its result is a value, not a promise', () => {
    expectTypeOf<ReturnType<QuarantineLane<number>['offer']>>().toEqualTypeOf<QuarantineOffer>();
    expectTypeOf<QuarantineOffer>().not.toExtend<PromiseLike<unknown>>();
  });

  it('at 10x overflow the clean lane processes everything, unchanged, and drops are exact', () => {
    const CAPACITY = 100;
    const RECORDS = 4 * CAPACITY * 10; // a quarter are bad: 10x the quarantine's capacity
    const budgetConfig = parseByteBudgetConfig({ bytes: 1_000, warmUp: { fraction: 1 } });

    // Baseline: a writer keeps the quarantine empty.
    const idleBudget = new ByteBudget(budgetConfig, new ManualClock());
    const idle = lane(CAPACITY);
    const drained: number[] = [];
    const idleRun = runCleanLane(RECORDS, idle, idleBudget, () => {
      drained.push(...idle.drain().map((e) => e.record));
    });
    expect(idle.stats()).toMatchObject({ shedTotal: 0, depth: 0 });

    // Overflow: the quarantine writer is stalled for the whole run.
    const budget = new ByteBudget(budgetConfig, new ManualClock());
    const q = lane(CAPACITY);
    const run = runCleanLane(RECORDS, q, budget);

    const expectedClean = Array.from({ length: RECORDS }, (_, i) => i).filter((i) => i % 4 !== 3);
    expect(run.cleanWritten).toEqual(expectedClean);
    expect(run.cleanWritten).toEqual(idleRun.cleanWritten);
    expect(budget.stats()).toEqual(idleBudget.stats());
    expect(budget.stats()).toMatchObject({ inFlightBytes: 0, waiters: 0 });

    const stats = q.stats();
    expect(run.quarantined).toBe(10 * CAPACITY);
    expect(stats.offered).toBe(10 * CAPACITY);
    expect(stats.depth).toBe(CAPACITY);
    expect(stats.shedTotal).toBe(9 * CAPACITY);
    // Reasons cycle, so the first CAPACITY offers were queued and the rest shed, exactly.
    const expectedShed = Object.fromEntries(QUARANTINE_REASONS.map((r) => [r, 0])) as Record<
      QuarantineReason,
      number
    >;
    for (let i = CAPACITY; i < 10 * CAPACITY; i++) {
      expectedShed[QUARANTINE_REASONS[i % QUARANTINE_REASONS.length]!] += 1;
    }
    expect(stats.shed).toEqual(expectedShed);
    // The oldest entries are the ones kept.
    expect(q.drain().map((e) => e.record)[0]).toBe(3);
    expect(drained.length).toBe(10 * CAPACITY);
  });
});
