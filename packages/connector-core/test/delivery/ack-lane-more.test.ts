import { describe, expect, it } from 'vitest';
import { rawAnchor } from '../../src/confirm.js';
import { AckLane, type DurableStep, type Pending } from '../../src/delivery/ack-lane.js';
import { offsetSpan, type OffsetSpan } from '../../src/offset-span.js';
import { sinkId } from '../../src/sink-id.js';
import { recordingTarget } from './helpers.js';

const ID = sinkId('lane-more');
const span = (n: number): OffsetSpan => offsetSpan('t', 0, n * 10, n * 10 + 10);
const entry = (n: number): Pending<number, 'primary-raw'> => ({
  position: n,
  confirm: rawAnchor(span(n)),
  span: span(n),
  records: 10,
  bytes: 100,
  submittedAt: 1,
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 10_000) throw new Error('condition never held');
    await new Promise((r) => setImmediate(r));
  }
}

/** A step that, while held, lets the test pull what was queued into its burst with `more`. */
function extendingStep() {
  const held: {
    burst: readonly Pending<number, 'primary-raw'>[];
    more: () => readonly Pending<number, 'primary-raw'>[];
    last: () => number;
    release: () => void;
    fail: (e: Error) => void;
  }[] = [];
  const step: DurableStep<number, Pending<number, 'primary-raw'>> = (burst, ctx) =>
    new Promise<void>((release, fail) =>
      held.push({ burst, more: () => ctx.more(), last: () => ctx.last, release, fail }),
    );
  return { held, step };
}

describe('AckLane burst extension (BurstContext.more)', () => {
  it('takes what was queued since into the burst, moves `last`, and counts the burst once at its final size', async () => {
    const target = recordingTarget<'primary-raw'>();
    const lane = new AckLane<number, 'primary-raw'>({
      sink: ID,
      durability: 'server-ack',
      target,
      queue: { maxItems: 100, maxBytes: 1e9 },
      burst: { maxItems: 4 },
    });
    const { held, step } = extendingStep();
    const running = lane.run(step);
    await lane.submit(entry(0));
    await until(() => held.length === 1);
    for (let i = 1; i <= 5; i++) await lane.submit(entry(i));
    const h = held[0]!;
    expect(h.last()).toBe(0);
    // The burst bound (4) caps the extension: 1 taken + 3 more.
    expect(h.more().map((e) => e.position)).toEqual([1, 2, 3]);
    expect(h.more()).toEqual([]);
    expect(h.last()).toBe(3);
    expect(h.burst.map((e) => e.position)).toEqual([0, 1, 2, 3]);
    expect(target.applied).toHaveLength(0);
    h.release();
    await until(() => held.length === 2 && target.applied.length === 4);
    expect(target.applied.map((a) => a.span.start)).toEqual([0, 10, 20, 30]);
    expect(held[1]!.burst.map((e) => e.position)).toEqual([4, 5]);
    held[1]!.release();
    lane.end();
    await running;
    expect(lane.metrics.coalesce.count).toBe(2);
    expect(lane.metrics.coalesce.sum).toBe(6);
  });

  it('a step that fails after extending confirms nothing of the extended burst', async () => {
    const target = recordingTarget<'primary-raw'>();
    const lane = new AckLane<number, 'primary-raw'>({
      sink: ID,
      durability: 'server-ack',
      target,
      queue: { maxItems: 100, maxBytes: 1e9 },
    });
    const { held, step } = extendingStep();
    const running = lane.run(step).catch((e: unknown) => e);
    await lane.submit(entry(0));
    await until(() => held.length === 1);
    await lane.submit(entry(1));
    expect(held[0]!.more()).toHaveLength(1);
    held[0]!.fail(new Error('wait failed'));
    expect(await running).toMatchObject({ message: 'wait failed' });
    expect(target.applied).toHaveLength(0);
    await expect(lane.submit(entry(2))).rejects.toThrow('wait failed');
  });
});
