import { describe, expect, it } from 'vitest';
import {
  derivedCoverage,
  rawAnchor,
  setAsideOf,
  sinkId,
  type Confirm,
  type SetAside,
  type SetAsideHook,
} from '@thalweg/connector-core';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { FakeTransportFactory, type Fault } from '../src/fake-transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import type { ZerobusConfigInput } from '../src/config.js';
import { batchOf, drive, quiet, recordingTarget, settled, spanAt, until } from './helpers.js';

const FIELDS = [{ name: 'n', type: 'int32', nullable: false }] as const;
const ID = sinkId('zerobus');

function secondary(
  factory: FakeTransportFactory,
  config: Record<string, unknown> = {},
  target = recordingTarget<'secondary'>(),
) {
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: {
      table: 'main.thalweg.events',
      streams: 1,
      retry: { baseDelayMs: 1 },
      rebuild: { baseDelayMs: 1 },
      ...config,
    },
    fields: FIELDS,
    factory,
    confirm: target,
    log: quiet,
  });
  return { sink, target };
}

const cover = (i: number): Confirm<'secondary'> => derivedCoverage(ID, spanAt(i));

/** A recording target with the set-aside hook: what it was told to set aside, and why. */
function asideTarget() {
  const target = recordingTarget<'secondary'>();
  const asides: { start: number; reason: SetAside['reason']; error: Error }[] = [];
  const setAside: SetAsideHook<'secondary'> = async (_confirm, span, refusal) => {
    asides.push({ start: span.start, reason: refusal.reason, error: refusal.error });
  };
  return Object.assign(target, { setAside, asides });
}

describe('ZerobusSink ack lane', () => {
  it('returns once queued and confirms only after the durable acknowledgement that covers it', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    const { sink, target } = secondary(factory);
    await sink.submit(batchOf(5), spanAt(0), cover(0));
    await until(() => sink.progress()[0]?.submitted === 0);
    // Batch 0 is sent and waited on; batch 1 stays queued on the lane while that wait lasts.
    await sink.submit(batchOf(5), spanAt(1), cover(1));
    expect(target.applied).toHaveLength(0);
    expect(sink.progress()[0]).toMatchObject({ submitted: 0, delivered: -1, pending: 1 });

    const flushed = sink.flush();
    expect(await settled(flushed)).toBe(false);
    factory.opened[0]!.acknowledgeUpTo(0);
    await until(() => sink.progress()[0]?.submitted === 1);
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0]);
    expect(await settled(flushed)).toBe(false);
    factory.opened[0]!.acknowledgeUpTo(1);
    await flushed;
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0, 10]);
    expect(target.applied.every((a) => a.receipt.durability === 'server-ack')).toBe(true);
    expect(sink.progress()[0]).toMatchObject({ submitted: 1, delivered: 1, pending: 0 });
    await sink.close();
  });

  it('coalesces a burst into one wait and confirms it in ascending order', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 20 });
    const { sink, target } = secondary(factory);
    for (let i = 0; i < 40; i++) await sink.submit(batchOf(2), spanAt(i), cover(i));
    await sink.flush();
    const metrics = sink.metrics()[0]!;
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual(
      Array.from({ length: 40 }, (_, i) => i * 10),
    );
    // 40 batches confirmed by far fewer waits than batches: pipelined.
    expect(metrics.coalesce.count).toBeLessThan(40);
    expect(metrics.coalesce.sum).toBe(40);
    expect(metrics.deliveryLatencyMs.count).toBe(40);
    await sink.close();
  });

  it('makes submit wait when the stream’s channel is full (backpressure)', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    const { sink } = secondary(factory, { channelCapacity: 1 });
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    // The lane took batch 0 into its burst and waits on it; one more fits the channel.
    await settled(Promise.resolve());
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    const third = sink.submit(batchOf(1), spanAt(2), cover(2));
    expect(await settled(third)).toBe(false);
    factory.opened[0]!.acknowledgeUpTo(0);
    await third;
    await drive(factory, sink.close());
  });

  it('retries a transient wait failure on the same stream, never opening another', async () => {
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: () => [{ op: 'wait', nth: 1, failure: 'transient' }],
    });
    const { sink, target } = secondary(factory);
    for (let i = 0; i < 5; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(factory.opened).toHaveLength(1);
    expect(sink.metrics()[0]!.retries.value).toBe(1);
    expect(target.applied).toHaveLength(5);
    await sink.close();
  });

  it('sets aside one batch whose send retries ran out (retry-exhausted), and takes the next on the same stream', async () => {
    // The transport refuses the 1st and 2nd submit transiently: with two
    // attempts, batch 0 is given up on; batch 1 is its 3rd submit.
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: () => [
        { op: 'submit', nth: 1, failure: 'transient' },
        { op: 'submit', nth: 2, failure: 'transient' },
      ],
    });
    const target = asideTarget();
    const { sink } = secondary(factory, { retry: { baseDelayMs: 1, maxAttempts: 2 } }, target);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    await sink.flush();
    expect(target.asides.map((a) => a.start)).toEqual([0]);
    const refused = target.asides[0]!;
    expect(refused.reason).toBe('retry-exhausted');
    expect(refused.error).toMatchObject({ code: 'TWG_ZEROBUS_TRANSIENT', scope: 'batch' });
    expect(refused.error.message).toMatch(/orders\/0\[0,10\) was not accepted through 2 attempts/);
    expect(setAsideOf(refused.error)?.reason).toBe('retry-exhausted');
    expect(factory.opened).toHaveLength(1);
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([10]);
    await sink.close();
  });

  it('sets aside a poison batch in its place (scope batch): the stream stays and the next batch lands', async () => {
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: () => [{ op: 'submit', nth: 1, failure: 'poison-batch' }],
    });
    const target = asideTarget();
    const { sink } = secondary(factory, {}, target);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    await sink.flush();
    expect(target.asides).toMatchObject([{ start: 0, reason: 'poison' }]);
    expect(target.asides[0]!.error).toMatchObject({ failure: 'poison-batch', scope: 'batch' });
    expect(factory.opened).toHaveLength(1);
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([10]);
    await sink.close();
  });

  it('rejects at submit, with no offset used, a batch whose schema is not the stream’s', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
    const { sink, target } = secondary(factory);
    const other = new ZerobusSink<'secondary'>({
      id: ID,
      config: { table: 'main.thalweg.events', streams: 1 },
      fields: [{ name: 'x', type: 'int64', nullable: true }],
      factory,
      confirm: target,
      log: quiet,
    });
    await expect(sink.submit(batchOf(1), spanAt(0), cover(0))).resolves.toBeUndefined();
    await sink.flush();
    await expect(other.submit(batchOf(1), spanAt(1), cover(1))).rejects.toMatchObject({
      failure: 'poison-batch',
      scope: 'batch',
    });
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0]);
    await Promise.all([sink.close(), other.close()]);
  });

  it('rebuilds a poisoned stream and replays what it had not confirmed, confirming each batch once', async () => {
    const faults = (i: number): Fault[] =>
      i === 0 ? [{ op: 'wait', nth: 2, failure: 'poison-stream' }] : [];
    const factory = new FakeTransportFactory({ ackLatencyMs: 5, faults });
    const { sink, target } = secondary(factory);
    for (let i = 0; i < 30; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    const m = sink.metrics()[0]!;
    expect(m.poisoned.value).toBe(1);
    expect(m.rebuilds.value).toBe(1);
    // Counted once each, the replayed batches included.
    expect(m.submittedBatches.value).toBe(30);
    expect(m.deliveredBatches.value).toBe(30);
    expect(m.deliveredRecords.value).toBe(30);
    expect(factory.opened).toHaveLength(2);
    const starts = target.applied.map((a) => a.receipt.span.start);
    expect(new Set(starts).size).toBe(30);
    expect(starts).toHaveLength(30);
    // Every batch is on the server (replayed ones may also have been received before the death).
    expect(factory.server.batches.length).toBeGreaterThanOrEqual(30);
    await sink.close();
  });

  it('rebuilds a stream that died waiting on the last batch submitted, with no submit or flush after it', async () => {
    const faults = (i: number): Fault[] =>
      i === 0 ? [{ op: 'wait', nth: 1, failure: 'poison-stream' }] : [];
    const factory = new FakeTransportFactory({ ackLatencyMs: 1, faults });
    const { sink, target } = secondary(factory);
    const confirmed = new Promise<void>((resolve) => {
      const apply = target.apply.bind(target);
      target.apply = async (confirm, receipt) => {
        await apply(confirm, receipt);
        resolve();
      };
    });
    // The one batch anyone submits (a source that ended), and nobody flushes:
    // its stream dies waiting on it, and must still be replaced and replay it.
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await confirmed;
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0]);
    expect(factory.opened).toHaveLength(2);
    expect(sink.metrics()[0]!.rebuilds.value).toBe(1);
    await sink.close();
  });

  it('fails loud after the rebuild budget when every stream is poisoned', async () => {
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: () => [{ op: 'wait', nth: 1, failure: 'poison-stream' }],
    });
    const { sink, target } = secondary(factory, { rebuild: { baseDelayMs: 1, maxAttempts: 3 } });
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
    expect(target.applied).toHaveLength(0);
    expect(factory.opened.length).toBeLessThanOrEqual(4);
    await expect(sink.submit(batchOf(1), spanAt(1), cover(1))).rejects.toMatchObject({
      code: 'TWG_ZEROBUS_FATAL_CONFIG',
    });
    await sink.close().catch(() => undefined);
  });

  it('sets aside a poison batch between two that land, in order, and keeps the stream', async () => {
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: () => [{ op: 'submit', nth: 2, failure: 'poison-batch' }],
    });
    const target = asideTarget();
    const { sink } = secondary(factory, {}, target);
    for (let i = 0; i < 3; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0, 20]);
    expect(target.asides.map((a) => a.start)).toEqual([10]);
    expect(factory.opened).toHaveLength(1);
    await sink.close();
  });

  it('fails loud on a fatal-config failure without rebuilding', async () => {
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: () => [{ op: 'submit', nth: 1, failure: 'fatal-config' }],
    });
    const { sink } = secondary(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
    await expect(sink.submit(batchOf(1), spanAt(1), cover(1))).rejects.toMatchObject({
      code: 'TWG_ZEROBUS_FATAL_CONFIG',
    });
    expect(factory.opened).toHaveLength(1);
  });

  it('carries on after a confirmation target fails: that batch’s coverage lags, later ones land', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
    const applied: number[] = [];
    const target = {
      apply: async (_c: Confirm<'secondary'>, r: { span: { start: number } }) => {
        if (r.span.start === 10) throw new Error('coverage store down');
        applied.push(r.span.start);
      },
    };
    const { sink } = secondary(factory, {}, target as never);
    for (let i = 0; i < 3; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(applied).toEqual([0, 20]);
    expect(sink.metrics()[0]!.confirmFailures.value).toBe(1);
    await sink.close();
  });
});

describe('ZerobusSink pool and isolation', () => {
  it('spreads batches over its streams, each with its own lane, watermarks and metrics', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 5 });
    const { sink, target } = secondary(factory, { streams: 3 });
    for (let i = 0; i < 30; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(factory.opened).toHaveLength(3);
    const metrics = sink.metrics();
    expect(new Set(metrics).size).toBe(3);
    expect(new Set(metrics.map((m) => m.labels.stream)).size).toBe(3);
    expect(metrics.reduce((n, m) => n + m.coalesce.sum, 0)).toBe(30);
    expect(target.applied).toHaveLength(30);
    await sink.close();
  });

  it('sizes the pool from the bandwidth to reach', () => {
    const factory = new FakeTransportFactory();
    const { sink } = secondary(factory, {
      streams: undefined,
      targetBytesPerSec: 100,
      perStreamBytesPerSec: 30,
    });
    expect(sink.metrics()).toHaveLength(4);
  });
});

describe('ZerobusSink configuration and types', () => {
  it('logs every knob at start to debug, and nothing to log', () => {
    const lines: string[] = [];
    const info: string[] = [];
    new ZerobusSink<'secondary'>({
      id: ID,
      config: { table: 'main.thalweg.events' },
      fields: FIELDS,
      factory: new FakeTransportFactory(),
      confirm: recordingTarget(),
      log: (l) => info.push(l),
      debug: (l) => lines.push(l),
    });
    expect(info).toEqual([]);
    for (const knob of [
      'table=',
      'channelCapacity=256',
      'retry.maxAttempts=10',
      'rebuild.maxAttempts=5',
      'pool.streams=2',
    ]) {
      expect(lines.some((l) => l.includes(knob))).toBe(true);
    }
  });

  it('derives the stream fields from a batch schema, and refuses fields and schema both given', async () => {
    const schema = BatchSchema.define({
      fields: [{ name: 'n', type: column.int32, nullable: false }],
    });
    const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
    const make = (both: boolean) =>
      new ZerobusSink<'secondary'>({
        id: ID,
        config: { table: 'main.thalweg.events', streams: 1 },
        schema,
        ...(both ? { fields: FIELDS } : {}),
        factory,
        confirm: recordingTarget(),
        log: quiet,
      });
    expect(() => make(true)).toThrow(/sink "zerobus": both fields and schema are given; give one/);
    const sink = make(false);
    await sink.submit(batchOf(2), spanAt(0), cover(0));
    await sink.flush();
    expect(factory.opened[0]?.spec.fields).toEqual([{ name: 'n', type: 'int32', nullable: false }]);
    expect(factory.server.batches).toHaveLength(1);
    await sink.close();
  });

  it('refuses a per-batch wait knob and bad values, naming the field', () => {
    const make = (config: unknown) => () =>
      new ZerobusSink<'secondary'>({
        id: ID,
        // Untyped, as read from a file: validated all the same.
        config: config as ZerobusConfigInput,
        fields: FIELDS,
        factory: new FakeTransportFactory(),
        confirm: recordingTarget(),
        log: quiet,
      });
    expect(make({ table: 'main.thalweg.events', waitPerBatch: true })).toThrow(
      /zerobus\.waitPerBatch: .*unknown key/,
    );
    expect(make({ table: 'events' })).toThrow(/zerobus\.table: must be a three-part name/);
    expect(make({ table: 'a.b.c', channelCapacity: 0 })).toThrow(/zerobus\.channelCapacity/);
  });

  it('types confirmations by lane', () => {
    const { sink } = secondary(new FakeTransportFactory());
    // @ts-expect-error a secondary Zerobus stream cannot hold a raw-anchor confirmation
    const wrong = () => sink.submit(batchOf(1), spanAt(0), rawAnchor(spanAt(0)));
    expect(typeof wrong).toBe('function');
  });
});
