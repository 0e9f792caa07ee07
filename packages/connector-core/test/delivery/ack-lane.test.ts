import { describe, expect, it } from 'vitest';
import { derivedCoverage, rawAnchor, type ConfirmTarget } from '../../src/confirm.js';
import type { Receipt } from '../../src/receipt.js';
import { AckLane, type DurableStep, type Pending } from '../../src/delivery/ack-lane.js';
import { offsetSpan, type OffsetSpan } from '../../src/offset-span.js';
import { sinkId } from '../../src/sink-id.js';
import { gate, recordingTarget, settled } from './helpers.js';

const ID = sinkId('lane');
const span = (n: number): OffsetSpan => offsetSpan('t', 0, n * 10, n * 10 + 10);
const raw = (n: number): Pending<number, 'primary-raw'> => ({
  position: n,
  confirm: rawAnchor(span(n)),
  span: span(n),
  records: 10,
  bytes: 100,
  submittedAt: 1,
});

const secondary = (n: number): Pending<number, 'secondary'> => ({
  ...raw(n),
  confirm: derivedCoverage(ID, span(n)),
});

function lane(
  target: ConfirmTarget<'primary-raw'> = recordingTarget(),
  over: { onConfirmFailure?: (e: unknown) => void; maxItems?: number } = {},
) {
  return new AckLane<number, 'primary-raw'>({
    sink: ID,
    durability: 'flush-close',
    target,
    queue: { maxItems: over.maxItems ?? 100, maxBytes: 1e9 },
    ...(over.onConfirmFailure === undefined ? {} : { onConfirmFailure: over.onConfirmFailure }),
  });
}

/** A step that records the waits it made and holds each until released. */
function heldStep() {
  const waits: { burst: number[]; last: number; release: () => void; fail: (e: Error) => void }[] =
    [];
  const step: DurableStep<number, Pending<number, 'primary-raw'>> = (burst, ctx) =>
    new Promise<void>((release, fail) =>
      waits.push({ burst: burst.map((e) => e.position), last: ctx.last, release, fail }),
    );
  return { waits, step };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 10_000) throw new Error('condition never held');
    await new Promise((r) => setImmediate(r));
  }
}

describe('AckLane', () => {
  it('confirms nothing before the step says durable, then each batch in ascending order', async () => {
    const target = recordingTarget<'primary-raw'>();
    const l = lane(target);
    const { waits, step } = heldStep();
    for (const n of [0, 1, 2]) await l.submit(raw(n));
    const running = l.run(step);
    await until(() => waits.length === 1);
    expect(waits[0]!.burst).toEqual([0, 1, 2]);
    expect(await settled(l.flush())).toBe(false);
    expect(target.applied).toEqual([]);
    waits[0]!.release();
    await l.flush();
    expect(target.applied.map((r) => r.span.start)).toEqual([0, 10, 20]);
    expect(target.applied[0]).toMatchObject<Partial<Receipt>>({
      sink: ID,
      durability: 'flush-close',
      records: 10,
      bytes: 100,
      submittedAt: 1,
    });
    expect(l.delivered).toBe(2);
    l.end();
    await running;
  });

  it('waits once per burst, on its largest position, however many batches queued behind it', async () => {
    const l = lane();
    const { waits, step } = heldStep();
    const running = l.run(step);
    await l.submit(raw(0));
    await until(() => waits.length === 1);
    for (let n = 1; n <= 50; n++) await l.submit(raw(n));
    waits[0]!.release();
    await until(() => waits.length === 2);
    expect(waits.map((w) => w.last)).toEqual([0, 50]);
    expect(waits[1]!.burst).toHaveLength(50);
    waits[1]!.release();
    await l.flush();
    expect(l.metrics.coalesce.count).toBe(2);
    expect(l.metrics.coalesce.sum).toBe(51);
    expect(l.metrics.deliveryLatencyMs.count).toBe(51);
    expect(l.metrics.pending.value).toBe(0);
    l.end();
    await running;
  });

  it('makes the next burst durable while confirming the last, at most one burst behind', async () => {
    const held = gate();
    const l = lane({ apply: () => held.opened });
    const { waits, step } = heldStep();
    const running = l.run(step);
    await l.submit(raw(0));
    await until(() => waits.length === 1);
    await l.submit(raw(1));
    waits[0]!.release();
    // Burst 1's step runs although burst 0's confirmation is still held.
    await until(() => waits.length === 2);
    await l.submit(raw(2));
    waits[1]!.release();
    // Burst 1's confirmations wait behind burst 0's: no third step yet.
    const third = until(() => waits.length === 3);
    expect(await settled(third)).toBe(false);
    held.open();
    await third;
    waits[2]!.release();
    await l.flush();
    l.end();
    await running;
  });

  it('carries on past a confirmation target that throws, counting and reporting it', async () => {
    const reported: unknown[] = [];
    const l = lane(
      {
        apply: (_c, r) =>
          r.span.start === 0 ? Promise.reject(new Error('store down')) : Promise.resolve(),
      },
      {
        onConfirmFailure: (e) => {
          reported.push(e);
          throw new Error('a logger that throws');
        },
      },
    );
    const running = l.run(() => Promise.resolve());
    await l.submit(raw(0));
    await l.submit(raw(1));
    await l.flush();
    expect(l.metrics.confirmFailures.value).toBe(1);
    expect(reported).toHaveLength(1);
    expect(l.delivered).toBe(1);
    expect(l.failed).toBeNull();
    l.end();
    await running;
  });

  it('flush waits for what was submitted before it, not after', async () => {
    const l = lane();
    const { waits, step } = heldStep();
    const running = l.run(step);
    await l.submit(raw(0));
    const first = l.flush();
    await until(() => waits.length === 1);
    await l.submit(raw(1));
    waits[0]!.release();
    await first;
    expect(l.settled).toBe(1);
    await until(() => waits.length === 2);
    const second = l.flush();
    expect(await settled(second)).toBe(false);
    waits[1]!.release();
    await second;
    l.end();
    await running;
  });

  it('a failing step ends the lane: earlier bursts confirmed, nothing after, every wait rejected', async () => {
    const target = recordingTarget<'primary-raw'>();
    const l = lane(target, { maxItems: 1 });
    const { waits, step } = heldStep();
    const running = l.run(step);
    const ran = running.then(
      () => null,
      (e: unknown) => e,
    );
    await l.submit(raw(0));
    await until(() => waits.length === 1);
    waits[0]!.release();
    await until(() => target.applied.length === 1);
    await l.submit(raw(1));
    await until(() => waits.length === 2);
    await l.submit(raw(2));
    const blocked = l.submit(raw(3));
    const flushed = l.flush();
    const boom = new Error('disk gone');
    waits[1]!.fail(boom);
    expect(await ran).toBe(boom);
    await expect(blocked).rejects.toBe(boom);
    await expect(flushed).rejects.toBe(boom);
    await expect(l.flush()).rejects.toBe(boom);
    await expect(l.submit(raw(4))).rejects.toBe(boom);
    expect(l.offer(raw(4))).toBe(false);
    expect(target.applied.map((r) => r.span.start)).toEqual([0]);
    expect(l.failed).toBe(boom);
    expect(l.metrics.poisoned.value).toBe(1);
  });

  it('stop drops what is queued and rejects waiting calls, without counting a failure', async () => {
    const target = recordingTarget<'primary-raw'>();
    const l = lane(target, { maxItems: 1 });
    const { waits, step } = heldStep();
    await l.submit(raw(0));
    const running = l.run(step);
    await until(() => waits.length === 1);
    await l.submit(raw(1));
    const blocked = l.submit(raw(2));
    const flushed = l.flush();
    const closed = new Error('closed');
    const stopped = l.stop(closed);
    await expect(blocked).rejects.toBe(closed);
    // The burst under way still settles: it is durable once its step says so.
    waits[0]!.release();
    await stopped;
    await expect(flushed).rejects.toBe(closed);
    await running;
    expect(target.applied.map((r) => r.span.start)).toEqual([0]);
    expect(l.metrics.poisoned.value).toBe(0);
  });

  it('settles a step hand-over in order; a batch set aside goes to setAside, never to apply', async () => {
    const target = recordingTarget<'secondary'>();
    const asides: [number, string, string][] = [];
    const settledOrder: number[] = [];
    const withOnSettled = new AckLane<number, 'secondary'>({
      sink: ID,
      durability: 'transaction-commit',
      target: {
        ...target,
        setAside: (confirm, at, refusal) => {
          asides.push([at.start, confirm.kind, refusal.reason]);
          return Promise.resolve();
        },
      },
      queue: { maxItems: 10, maxBytes: 1e9 },
      onSettled: (e) => settledOrder.push(e.position),
    });
    for (const n of [0, 1, 2]) await withOnSettled.submit(secondary(n));
    const running = withOnSettled.run(async (burst, ctx) => {
      await ctx.settle([{ entry: burst[0]!, bytes: 7, at: 5 }]);
      await ctx.settle([
        {
          entry: burst[1]!,
          kind: 'set-aside',
          refusal: { reason: 'poison', error: new Error('x') },
        },
      ]);
      // The rest is settled as durable once the step resolves.
    });
    await withOnSettled.flush();
    expect(settledOrder).toEqual([0, 1, 2]);
    expect(target.applied.map((r) => [r.span.start, r.bytes])).toEqual([
      [0, 7],
      [20, 100],
    ]);
    expect(asides).toEqual([[10, 'derived-coverage', 'poison']]);
    expect(target.applied[0]!.confirmedAt).toBe(5);
    expect(withOnSettled.delivered).toBe(2);
    withOnSettled.end();
    await running;
  });

  it('a throwing setAside counts as a confirmation failure and the lane goes on', async () => {
    const target = recordingTarget<'secondary'>();
    const failures: unknown[] = [];
    const l = new AckLane<number, 'secondary'>({
      sink: ID,
      durability: 'server-ack',
      target: { ...target, setAside: () => Promise.reject(new Error('quarantine gone')) },
      queue: { maxItems: 10, maxBytes: 1e9 },
      onConfirmFailure: (e) => failures.push(e),
    });
    for (const n of [0, 1]) await l.submit(secondary(n));
    const running = l.run(async (burst, ctx) => {
      await ctx.settle([
        {
          entry: burst[0]!,
          kind: 'set-aside',
          refusal: { reason: 'retry-exhausted', error: new Error('down') },
        },
      ]);
    });
    await l.flush();
    expect(l.metrics.confirmFailures.value).toBe(1);
    expect(failures).toMatchObject([{ message: 'quarantine gone' }]);
    expect(target.applied.map((r) => r.span.start)).toEqual([10]);
    l.end();
    await running;
  });

  it('refuses a step that settles out of its burst order, confirming nothing of it', async () => {
    const target = recordingTarget<'primary-raw'>();
    const l = lane(target);
    await l.submit(raw(0));
    await l.submit(raw(1));
    const running = l.run(async (burst, ctx) => {
      await ctx.settle([{ entry: burst[1]! }]);
    });
    const ran = running.then(
      () => null,
      (e: unknown) => e,
    );
    expect(await ran).toMatchObject({ code: 'TWG_DELIVERY_OUT_OF_ORDER' });
    expect(target.applied).toEqual([]);
  });

  it('refuses a position that does not ascend', async () => {
    const l = lane();
    await l.submit(raw(3));
    await expect(l.submit(raw(3))).rejects.toMatchObject({ code: 'TWG_DELIVERY_OUT_OF_ORDER' });
    expect(l.offer(raw(2))).toBe(false);
  });

  it('types a lane by its position and its confirmation lane', () => {
    const l = lane();
    // @ts-expect-error a raw lane cannot carry a coverage token
    void l.submit(secondary(1)).catch(() => undefined);
    // @ts-expect-error a lane positioned by number takes no bigint position
    void l.submit({ ...raw(2), position: 2n }).catch(() => undefined);
    const coverageTarget: ConfirmTarget<'secondary'> = { apply: () => Promise.resolve() };
    new AckLane<bigint, 'primary-raw'>({
      sink: ID,
      durability: 'server-ack',
      // @ts-expect-error a raw lane confirms through a raw target only
      target: coverageTarget,
      queue: { maxItems: 1, maxBytes: 1 },
    });
    const byBigint = new AckLane<bigint, 'secondary'>({
      sink: ID,
      durability: 'server-ack',
      target: coverageTarget,
      queue: { maxItems: 1, maxBytes: 1 },
    });
    void byBigint.run((_burst, ctx) => {
      // @ts-expect-error the step's position is the lane's
      const n: number = ctx.last;
      expect(n).toBeDefined();
      return Promise.resolve();
    });
    byBigint.end();
  });

  it('gives raw no way to set a batch aside: raw keeps every record', () => {
    const l = lane();
    void l.run(async (burst, ctx) => {
      await ctx.settle([
        // @ts-expect-error a primary-raw batch can only settle as durable
        { entry: burst[0]!, kind: 'set-aside', refusal: { reason: 'poison', error: new Error() } },
      ]);
    });
    const rawTarget: ConfirmTarget<'primary-raw'> = {
      apply: () => Promise.resolve(),
      // @ts-expect-error a primary-raw target has no set-aside hook
      setAside: () => Promise.resolve(),
    };
    expect(rawTarget.setAside).toBeDefined();
    l.end();
  });
});
