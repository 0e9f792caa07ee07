import { diag, DiagLogLevel, type Tracer } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { events, offsetSpan, sinkId, type OffsetSpan } from '@thalweg/connector-core';
import { afterEach, describe, expect, it } from 'vitest';
import { OtelError } from '../src/errors.js';
import { SPAN_ATTRIBUTES as A, SPAN_NAMES } from '../src/span-names.js';
import { traceEvents, type TraceEventsOptions } from '../src/trace-events.js';

const RAW = sinkId('raw');
const PG = sinkId('pg');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setUp(options?: TraceEventsOptions) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = traceEvents(provider.getTracer('thalweg-test'), options);
  cleanups.push(
    () => provider.shutdown(),
    () => tracing.stop(),
  );
  return { tracing, ended: (): ReadableSpan[] => exporter.getFinishedSpans() };
}

function read(span: OffsetSpan): void {
  events.batchRead.publish({ span, records: span.end - span.start, bytes: 100 });
}

function commit(topic: string, partition: number, next: number): void {
  events.committed.publish({ partition: { topic, partition }, next });
}

const ms = (t: readonly [number, number]): number => t[0] * 1000 + t[1] / 1e6;

describe('traceEvents', () => {
  it('spans a source batch from its read to the commit that covers it, with its lanes as events', () => {
    const { ended } = setUp();
    read(offsetSpan('orders', 0, 0, 10));
    read(offsetSpan('orders', 0, 10, 20));
    // The pipeline cut the first batch in two for raw.
    for (const span of [offsetSpan('orders', 0, 0, 5), offsetSpan('orders', 0, 5, 10)]) {
      events.submitted.publish({ sink: RAW, lane: 'primary-raw', span, records: 5 });
    }
    events.confirmed.publish({
      sink: RAW,
      stream: '0',
      span: offsetSpan('orders', 0, 0, 10),
      records: 10,
      latencyMs: 12,
    });
    commit('orders', 1, 100); // another partition
    commit('orders', 0, 5); // not past the first batch's end
    expect(ended()).toEqual([]);

    commit('orders', 0, 10);
    expect(ended()).toHaveLength(1);
    const [batch] = ended();
    expect(batch?.name).toBe(SPAN_NAMES.batch);
    expect(batch?.parentSpanContext).toBeUndefined();
    expect(batch?.attributes).toEqual({
      [A.topic]: 'orders',
      [A.partition]: 0,
      [A.offsetStart]: 0,
      [A.offsetEnd]: 10,
      [A.records]: 10,
      [A.bytes]: 100,
      [A.committedNext]: 10,
      [A.endedBy]: 'committed',
    });
    expect(batch?.events.map((e) => e.name)).toEqual(['submitted', 'submitted', 'confirmed']);
    expect(batch?.events[1]?.attributes).toMatchObject({
      [A.sink]: 'raw',
      [A.lane]: 'primary-raw',
      [A.offsetStart]: 5,
      [A.offsetEnd]: 10,
    });
    expect(batch?.events[2]?.attributes).toMatchObject({
      [A.sink]: 'raw',
      [A.stream]: '0',
      [A.latencyMs]: 12,
    });

    commit('orders', 0, 20);
    expect(ended().map((s) => s.attributes[A.offsetStart])).toEqual([0, 10]);
  });

  it('a quarantined record is an event of its open batch, or a short span when none is open', () => {
    const { ended } = setUp();
    read(offsetSpan('orders', 0, 0, 10));
    const q = { sink: 'pg', reason: 'contract', topic: 'orders', partition: 0 } as const;
    events.quarantined.publish({ ...q, offset: 3 });
    events.quarantined.publish({ ...q, offset: 42 });
    expect(ended().map((s) => s.name)).toEqual([SPAN_NAMES.quarantined]);
    expect(ended()[0]?.attributes).toEqual({
      [A.sink]: 'pg',
      [A.reason]: 'contract',
      [A.topic]: 'orders',
      [A.partition]: 0,
      [A.offset]: 42,
    });
    commit('orders', 0, 10);
    const batch = ended()[1];
    expect(batch?.events.map((e) => [e.name, e.attributes?.[A.offset]])).toEqual([
      ['quarantined', 3],
    ]);
  });

  it('a durable wait is a span of its own from its oldest acceptance to durable; a rebuilt stream a short one', () => {
    const { ended } = setUp();
    const at = Date.UTC(2026, 0, 1);
    events.durable.publish({
      sink: PG,
      stream: '1',
      batches: 7,
      firstSubmittedAt: at,
      durableAt: at + 40,
    });
    events.streamRebuilt.publish({ sink: PG, stream: '1', cause: 'TWG_SINK_POISON: reset' });
    const [durable, rebuilt] = ended();
    expect(durable?.name).toBe(SPAN_NAMES.durable);
    expect(durable?.attributes).toEqual({ [A.sink]: 'pg', [A.stream]: '1', [A.batches]: 7 });
    expect(ms(durable!.startTime)).toBe(at);
    expect(ms(durable!.endTime)).toBe(at + 40);
    expect(rebuilt?.name).toBe(SPAN_NAMES.streamRebuilt);
    expect(rebuilt?.attributes).toEqual({
      [A.sink]: 'pg',
      [A.stream]: '1',
      [A.cause]: 'TWG_SINK_POISON: reset',
    });
  });

  it('holds at most maxOpenSpans batches open: the oldest is ended as evicted and counted', () => {
    const { tracing, ended } = setUp({ maxOpenSpans: 3 });
    for (let i = 0; i < 5; i++) read(offsetSpan('orders', i % 2, i * 10, i * 10 + 10));
    expect(tracing.stats()).toEqual({ open: 3, evicted: 2 });
    expect(ended().map((s) => [s.attributes[A.offsetStart], s.attributes[A.endedBy]])).toEqual([
      [0, 'evicted'],
      [10, 'evicted'],
    ]);
    commit('orders', 0, 50);
    commit('orders', 1, 50);
    expect(tracing.stats()).toEqual({ open: 0, evicted: 2 });
    expect(ended().map((s) => s.attributes[A.endedBy])).toEqual([
      'evicted',
      'evicted',
      'committed',
      'committed',
      'committed',
    ]);
  });

  it('stop() ends the open spans as stopped and unsubscribes every channel', () => {
    const { tracing, ended } = setUp();
    read(offsetSpan('orders', 0, 0, 10));
    expect(events.batchRead.active).toBe(true);
    tracing.stop();
    tracing.stop(); // idempotent
    expect(ended().map((s) => s.attributes[A.endedBy])).toEqual(['stopped']);
    for (const channel of Object.values(events)) expect(channel.active, channel.name).toBe(false);
    read(offsetSpan('orders', 0, 10, 20));
    expect(tracing.stats()).toEqual({ open: 0, evicted: 0 });
    expect(ended()).toHaveLength(1);
  });

  it('refuses a cap that is not a positive integer, naming the option', () => {
    for (const maxOpenSpans of [0, -1, 1.5, Number.NaN]) {
      expect(() => traceEvents({} as Tracer, { maxOpenSpans })).toThrow(OtelError);
    }
    expect(() => traceEvents({} as Tracer, { maxOpenSpans: 0 })).toThrow(
      /TWG_OTEL_OPTION_INVALID: maxOpenSpans: 0 is not a positive integer/,
    );
  });

  it('a tracer that throws is reported to diag, never thrown into the publisher', () => {
    const errors: unknown[][] = [];
    const noop = (): void => undefined;
    diag.setLogger(
      {
        error: (...a: unknown[]) => errors.push(a),
        warn: noop,
        info: noop,
        debug: noop,
        verbose: noop,
      },
      DiagLogLevel.ERROR,
    );
    cleanups.push(() => diag.disable());
    const broken = {
      startSpan: () => {
        throw new Error('exporter bug');
      },
    } as unknown as Tracer;
    const tracing = traceEvents(broken);
    cleanups.push(() => tracing.stop());
    expect(() => read(offsetSpan('orders', 0, 0, 10))).not.toThrow();
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.[0])).toContain('opening a batch span');
    expect(errors[0]?.[1]).toEqual(new Error('exporter bug'));
  });
});
