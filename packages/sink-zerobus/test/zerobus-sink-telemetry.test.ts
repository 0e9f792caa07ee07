import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  derivedCoverage,
  events,
  sinkId,
  type Confirm,
  type DurableEvent,
  type StreamRebuiltEvent,
} from '@thalweg/connector-core';
import { FakeTransportFactory, type Fault } from '../src/fake-transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { batchOf, drive, quiet, recordingTarget, settled, spanAt } from './helpers.js';

const FIELDS = [{ name: 'n', type: 'int32', nullable: false }] as const;
const ID = sinkId('zerobus');
const cover = (i: number): Confirm<'secondary'> => derivedCoverage(ID, spanAt(i));

function sinkOn(factory: FakeTransportFactory, streams: number) {
  const target = recordingTarget<'secondary'>();
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: {
      table: 'main.thalweg.events',
      streams,
      retry: { baseDelayMs: 1 },
      rebuild: { baseDelayMs: 1 },
    },
    fields: FIELDS,
    factory,
    confirm: target,
    log: quiet,
  });
  return { sink, target };
}

const unsubscribers: (() => void)[] = [];
afterEach(() => {
  for (const off of unsubscribers.splice(0)) off();
  vi.restoreAllMocks();
});

/** Poisons stream 0's second wait once: its lane dies and the stream is rebuilt. */
const poisonOnce = (i: number): Fault[] =>
  i === 0 ? [{ op: 'wait', nth: 2, failure: 'poison-stream' }] : [];

describe('ZerobusSink telemetry', () => {
  it('reports one lane per stream of its pool, whose counters move as batches are accepted and acknowledged', async () => {
    const durable: DurableEvent[] = [];
    unsubscribers.push(events.durable.subscribe((m) => durable.push(m)));
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    const { sink } = sinkOn(factory, 2);
    const lanes = sink.lanes();
    expect(lanes.map((l) => l.stream)).toEqual(['0', '1']);
    expect(lanes.map((l) => l.metrics)).toEqual(sink.metrics());
    for (let i = 0; i < 4; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    const submitted = lanes.map((l) => l.metrics.submitted.value);
    expect(submitted.reduce((a, b) => a + b, 0)).toBe(4);
    // The pool spreads them: both streams carry some.
    expect(submitted.every((n) => n > 0)).toBe(true);
    expect(lanes.map((l) => l.metrics.delivered.value)).toEqual([0, 0]);
    const flushed = sink.flush();
    expect(await settled(flushed)).toBe(false);
    await drive(factory, flushed);
    // Each stream delivered what it accepted, no more.
    expect(lanes.map((l) => l.metrics.delivered.value)).toEqual(submitted);
    expect(lanes.map((l) => l.metrics.pending.value)).toEqual([0, 0]);
    // Each stream's lane labels its bursts with the stream's index.
    const bursts = (stream: string) =>
      durable.filter((d) => d.stream === stream).reduce((n, d) => n + d.batches, 0);
    expect([bursts('0'), bursts('1')]).toEqual(submitted);
    await sink.close();
  });

  it("a stream's lane metrics persist across the lanes its rebuild replaces, and the rebuild is published", async () => {
    const rebuilt: StreamRebuiltEvent[] = [];
    const durable: DurableEvent[] = [];
    unsubscribers.push(
      events.streamRebuilt.subscribe((m) => rebuilt.push(m)),
      events.durable.subscribe((m) => durable.push(m)),
    );
    const factory = new FakeTransportFactory({ ackLatencyMs: 5, faults: poisonOnce });
    const { sink, target } = sinkOn(factory, 1);
    const metrics = sink.lanes()[0]!.metrics;
    for (let i = 0; i < 30; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(factory.opened).toHaveLength(2);
    expect(sink.lanes()[0]!.metrics).toBe(metrics);
    expect(rebuilt).toHaveLength(1);
    expect(rebuilt[0]).toMatchObject({ sink: ID, stream: '0' });
    expect(rebuilt[0]!.cause).toMatch(/TWG_ZEROBUS_POISON_STREAM/);
    // Both lanes, the dead one and its replacement, counted into the stream's metrics.
    expect(metrics.delivered.value).toBe(target.applied.length);
    expect(metrics.submitted.value).toBeGreaterThanOrEqual(30);
    expect(metrics.poisoned.value).toBe(1);
    // Every lane of the stream says which stream it is.
    expect(durable.length).toBeGreaterThan(0);
    expect(durable.every((d) => d.stream === '0' && d.sink === ID)).toBe(true);
    await sink.close();
  });

  it('builds no rebuild message when nobody listens', async () => {
    const publish = vi.spyOn(events.streamRebuilt, 'publish');
    expect(events.streamRebuilt.active).toBe(false);
    const factory = new FakeTransportFactory({ ackLatencyMs: 5, faults: poisonOnce });
    const { sink } = sinkOn(factory, 1);
    for (let i = 0; i < 10; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(sink.metrics()[0]!.rebuilds.value).toBe(1);
    expect(publish).not.toHaveBeenCalled();
    await sink.close();
  });
});
