import { afterEach, describe, expect, it, vi } from 'vitest';
import { rawAnchor } from '../../src/confirm.js';
import { AckLane, type DurableStep, type Pending } from '../../src/delivery/ack-lane.js';
import { offsetSpan, type OffsetSpan } from '../../src/offset-span.js';
import { sinkId } from '../../src/sink-id.js';
import { events, type ConfirmedEvent, type DurableEvent } from '../../src/telemetry/events.js';
import { gate, recordingTarget } from './helpers.js';

const ID = sinkId('lane');
const span = (n: number): OffsetSpan => offsetSpan('t', 0, n * 10, n * 10 + 10);
const raw = (n: number, submittedAt = 1000 + n): Pending<number, 'primary-raw'> => ({
  position: n,
  confirm: rawAnchor(span(n)),
  span: span(n),
  records: 10 + n,
  bytes: 100,
  submittedAt,
});

function lane(target = recordingTarget<'primary-raw'>(), stream?: string) {
  return new AckLane<number, 'primary-raw'>({
    sink: ID,
    durability: 'flush-close',
    target,
    queue: { maxItems: 4, maxBytes: 1e9 },
    ...(stream === undefined ? {} : { stream }),
  });
}

/** Subscribes to the lane's two channels for the test; unsubscribed after it. */
function listen() {
  const durable: DurableEvent[] = [];
  const confirmed: ConfirmedEvent[] = [];
  const order: string[] = [];
  const offs = [
    events.durable.subscribe((m) => {
      durable.push(m);
      order.push(`durable:${m.batches}`);
    }),
    events.confirmed.subscribe((m) => {
      confirmed.push(m);
      order.push(`confirmed:${m.span.start}`);
    }),
  ];
  unsubscribers.push(...offs);
  return { durable, confirmed, order };
}

const unsubscribers: (() => void)[] = [];
afterEach(() => {
  for (const off of unsubscribers.splice(0)) off();
  vi.restoreAllMocks();
});

describe('AckLane telemetry', () => {
  it('durable carries the burst it made durable with one wait, confirmed each batch', async () => {
    const { durable, confirmed, order } = listen();
    const target = recordingTarget<'primary-raw'>();
    const l = lane(target, '3');
    const held = gate();
    const step: DurableStep<number, Pending<number, 'primary-raw'>> = () => held.opened;
    for (const n of [0, 1, 2]) await l.submit(raw(n));
    const running = l.run(step);
    held.open();
    await l.flush();
    expect(durable).toHaveLength(1);
    expect(durable[0]).toMatchObject({ sink: ID, stream: '3', batches: 3, firstSubmittedAt: 1000 });
    expect(durable[0]!.durableAt).toBeGreaterThanOrEqual(1000);
    expect(confirmed.map((c) => [c.span, c.records, c.stream, c.sink])).toEqual([
      [span(0), 10, '3', ID],
      [span(1), 11, '3', ID],
      [span(2), 12, '3', ID],
    ]);
    // Each latency is the receipt's own: accepted to durable.
    expect(confirmed.map((c) => c.latencyMs)).toEqual(
      target.applied.map((r) => r.confirmedAt - r.submittedAt),
    );
    // Confirmations are published in the lane's order, as they are applied.
    expect(order.filter((o) => o.startsWith('confirmed'))).toEqual([
      'confirmed:0',
      'confirmed:10',
      'confirmed:20',
    ]);
    l.end();
    await running;
  });

  it('a confirmation settled by the step carries the latency to the moment the step gave', async () => {
    const { confirmed, durable } = listen();
    const l = lane();
    const step: DurableStep<number, Pending<number, 'primary-raw'>> = async (burst, ctx) => {
      await ctx.settle(burst.map((entry) => ({ entry, at: entry.submittedAt + 7 })));
    };
    const running = l.run(step);
    await l.submit(raw(0, 50));
    await l.flush();
    expect(confirmed.map((c) => c.latencyMs)).toEqual([7]);
    // A lane given no stream is stream 0.
    expect(durable.map((d) => [d.stream, d.batches, d.firstSubmittedAt])).toEqual([['0', 1, 50]]);
    l.end();
    await running;
  });

  it('counts submitted and delivered and gauges the queue fill as batches move', async () => {
    const l = lane();
    const held = gate();
    for (const n of [0, 1]) await l.submit(raw(n));
    expect(l.metrics.submitted.value).toBe(2);
    expect(l.metrics.delivered.value).toBe(0);
    expect(l.metrics.saturation.value).toBe(0.5);
    expect(l.offer(raw(2))).toBe(true);
    expect(l.metrics.submitted.value).toBe(3);
    expect(l.metrics.saturation.value).toBe(0.75);
    const running = l.run(() => held.opened);
    held.open();
    await l.flush();
    expect(l.metrics.delivered.value).toBe(3);
    expect(l.metrics.saturation.value).toBe(0);
    expect(l.metrics.pending.value).toBe(0);
    l.end();
    await running;
  });

  it('builds no message when nobody listens', async () => {
    const durable = vi.spyOn(events.durable, 'publish');
    const confirmed = vi.spyOn(events.confirmed, 'publish');
    expect(events.durable.active).toBe(false);
    expect(events.confirmed.active).toBe(false);
    const l = lane();
    const running = l.run(() => Promise.resolve());
    for (const n of [0, 1]) await l.submit(raw(n));
    await l.flush();
    expect(durable).not.toHaveBeenCalled();
    expect(confirmed).not.toHaveBeenCalled();
    l.end();
    await running;
  });
});
