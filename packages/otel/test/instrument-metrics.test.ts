import { events, sinkId } from '@thalweg/connector-core';
import { DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { METRIC_DEFS, METRICS } from '@thalweg/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { instrumentMetrics } from '../src/instrument-metrics.js';
import { FakeObserved } from './fake-observed.js';
import { manualMeter, pointOf } from './metric-reader.js';

const RAW = { sink: 'raw', role: 'primary-raw', stream: '0' };
const PG1 = { sink: 'pg', role: 'secondary', stream: '1' };

function durable(sink: string, stream: string, batches: number): void {
  events.durable.publish({
    sink: sinkId(sink),
    stream,
    batches,
    firstSubmittedAt: 0,
    durableAt: 1,
  });
}

function confirmed(sink: string, stream: string, latencyMs: number): void {
  events.confirmed.publish({
    sink: sinkId(sink),
    stream,
    span: { topic: 'orders', partition: 0, start: 0, end: 10 },
    records: 10,
    latencyMs,
  });
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setUp(observed = new FakeObserved(), options?: { histograms?: boolean }) {
  const m = manualMeter();
  const instrumentation = instrumentMetrics(observed, m.meter, options);
  cleanups.push(
    () => m.shutdown(),
    () => instrumentation.stop(),
  );
  return { observed, instrumentation, collect: () => m.collect() };
}

describe('instrumentMetrics', () => {
  it('exposes every counter and gauge of the catalog that has samples, as an instrument of its kind', async () => {
    const { collect } = setUp();
    const metrics = await collect();
    // The fake has no recovery and no mode 1: those families have no sample, so no series.
    const recovery = new Set<string>([
      METRICS.recoveryUnclaimedWindows.name,
      METRICS.recoveryMaxLag.name,
      METRICS.rawUnread.name,
      METRICS.recoveryWindows.name,
      METRICS.recoveryRecords.name,
      METRICS.coverageLag.name,
      // Its coordination is an etcd cluster (mode 3): no backup is taken.
      METRICS.coordinationBackup.name,
    ]);
    for (const def of METRIC_DEFS) {
      const m = metrics.get(def.name);
      if (def.kind === 'histogram' || recovery.has(def.name)) {
        expect(m, def.name).toBeUndefined();
        continue;
      }
      if (def.kind === 'counter') {
        expect(m?.dataPointType, def.name).toBe(DataPointType.SUM);
        expect(m?.dataPointType === DataPointType.SUM && m.isMonotonic, def.name).toBe(true);
      } else {
        expect(m?.dataPointType, def.name).toBe(DataPointType.GAUGE);
      }
      expect(m?.descriptor.unit, def.name).toBe(def.unit);
      expect(m?.descriptor.description, def.name).toBe(def.help);
      expect(m?.dataPoints.length, def.name).toBeGreaterThan(0);
    }
  });

  it('labels each lane by sink, role and stream, and reads the values at each collection', async () => {
    const { observed, collect } = setUp();
    observed.pg1.pending.set(7);
    observed.raw.submitted.inc(3);
    let metrics = await collect();
    expect(pointOf(metrics.get(METRICS.pending.name), PG1)?.value).toBe(7);
    expect(pointOf(metrics.get(METRICS.pending.name), { ...PG1, stream: '0' })?.value).toBe(0);
    expect(pointOf(metrics.get(METRICS.submitted.name), RAW)?.value).toBe(3);
    expect(pointOf(metrics.get(METRICS.sinkShedBatches.name), { sink: 'pg' })?.value).toBe(1);
    expect(pointOf(metrics.get(METRICS.quarantined.name), { reason: 'decode' })?.value).toBe(3);
    expect(
      pointOf(metrics.get(METRICS.sourceLag.name), { topic: 'orders', partition: '0' })?.value,
    ).toBe(0);

    observed.pg1.pending.set(2);
    observed.raw.submitted.inc(4);
    observed.sourceRecords = 250;
    observed.lagOf0 = 40;
    metrics = await collect();
    expect(pointOf(metrics.get(METRICS.pending.name), PG1)?.value).toBe(2);
    expect(pointOf(metrics.get(METRICS.submitted.name), RAW)?.value).toBe(7);
    expect(pointOf(metrics.get(METRICS.sourceRecords.name), {})?.value).toBe(250);
    expect(
      pointOf(metrics.get(METRICS.sourceLag.name), { topic: 'orders', partition: '0' })?.value,
    ).toBe(40);
  });

  it('reads the topology once per collection, not once per instrument', async () => {
    const { observed, collect } = setUp();
    await collect();
    expect(observed.reads).toEqual({ stats: 1, health: 1, lanes: 1, sourceLag: 1 });
    await collect();
    expect(observed.reads).toEqual({ stats: 2, health: 2, lanes: 2, sourceLag: 2 });
  });

  it("records the durable channel's batches and the confirmed channel's latency in the lanes' buckets", async () => {
    const { observed, collect } = setUp();
    durable('pg', '1', 5);
    durable('pg', '1', 3);
    durable('raw', '0', 1);
    confirmed('raw', '0', 250);
    confirmed('raw', '0', 1500);
    const metrics = await collect();

    const coalesce = metrics.get(METRICS.coalesce.name);
    expect(coalesce?.descriptor.unit).toBe(METRICS.coalesce.unit);
    const pg = pointOf<Histogram>(coalesce, PG1)?.value;
    expect(pg).toMatchObject({ count: 2, sum: 8, min: 3, max: 5 });
    expect(pg?.buckets.boundaries).toEqual([...observed.pg1.coalesce.bounds]);
    expect(pointOf<Histogram>(coalesce, RAW)?.value).toMatchObject({ count: 1, sum: 1 });

    const latency = metrics.get(METRICS.deliveryLatency.name);
    expect(latency?.descriptor.unit).toBe('s');
    const raw = pointOf<Histogram>(latency, RAW)?.value;
    expect(raw).toMatchObject({ count: 2, sum: 1.75, min: 0.25, max: 1.5 });
    expect(raw?.buckets.boundaries).toEqual(
      observed.raw.deliveryLatencyMs.bounds.map((ms) => ms / 1000),
    );
    // 0.25 s lands in (0.2, 0.5], 1.5 s in (1, 2].
    const b = raw?.buckets;
    expect(b?.counts[b.boundaries.indexOf(0.5)]).toBe(1);
    expect(b?.counts[b.boundaries.indexOf(2)]).toBe(1);
  });

  it('takes the role of a sink whose lanes opened after instrumentation; an unnamed sink has none', async () => {
    const observed = new FakeObserved();
    const lanes = observed.laneList;
    observed.laneList = [];
    const { collect } = setUp(observed);
    observed.laneList = lanes; // the topology opened its sinks
    durable('pg', '1', 4);
    const before = observed.reads.lanes;
    durable('elsewhere', '0', 9);
    durable('elsewhere', '0', 9);
    durable('elsewhere', '0', 9);
    // One read of the lanes for the unknown sink, not one per event.
    expect(observed.reads.lanes).toBe(before + 1);
    const coalesce = (await collect()).get(METRICS.coalesce.name);
    expect(pointOf<Histogram>(coalesce, PG1)?.value).toMatchObject({ count: 1, sum: 4 });
    expect(pointOf<Histogram>(coalesce, { sink: 'elsewhere', stream: '0' })?.value).toMatchObject({
      count: 3,
      sum: 27,
    });
  });

  it('stop() removes the callback and unsubscribes the channels', async () => {
    const { observed, instrumentation, collect } = setUp();
    durable('raw', '0', 2);
    await collect();
    expect(events.durable.active).toBe(true);
    expect(events.confirmed.active).toBe(true);
    const reads = observed.reads.stats;

    instrumentation.stop();
    instrumentation.stop(); // idempotent
    expect(events.durable.active).toBe(false);
    expect(events.confirmed.active).toBe(false);
    durable('raw', '0', 2);
    const metrics = await collect();
    expect(observed.reads.stats).toBe(reads);
    expect(pointOf<Histogram>(metrics.get(METRICS.coalesce.name), RAW)?.value).toMatchObject({
      count: 1,
      sum: 2,
    });
  });

  it('with histograms: false leaves the channels without a subscriber', async () => {
    const { collect } = setUp(new FakeObserved(), { histograms: false });
    expect(events.durable.active).toBe(false);
    expect(events.confirmed.active).toBe(false);
    const metrics = await collect();
    expect(metrics.get(METRICS.coalesce.name)).toBeUndefined();
    expect(metrics.get(METRICS.pending.name)).toBeDefined();
  });
});
