import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { fakeZerobus, fromJson, zerobus } from '@thalweg/sink-zerobus';
import { files } from '@thalweg/source-files';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { METRICS } from '@thalweg/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { instrumentMetrics } from '../src/instrument-metrics.js';
import { SPAN_ATTRIBUTES as A, SPAN_NAMES } from '../src/span-names.js';
import { traceEvents } from '../src/trace-events.js';
import { manualMeter, pointOf } from './metric-reader.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const orders = BatchSchema.define({
  fields: [
    { name: 'id', type: column.utf8, nullable: false },
    { name: 'amount', type: column.int64, nullable: false },
  ],
  recordId: 'hex',
});

/** files -> raw segments -> a fake Zerobus table, over a fresh directory. */
async function topology() {
  const dir = await mkdtemp(join(tmpdir(), 'twg-otel-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'in'));
  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `o${i}`, amount: i }));
  await writeFile(join(dir, 'in', 'orders.ndjson'), lines.join('\n') + '\nnot json\n');
  return openTopology({
    source: files({
      format: 'ndjson',
      files: { kind: 'directory', directory: join(dir, 'in'), extension: '.ndjson' },
    }),
    raw: rawSegments({ dir: join(dir, 'raw') }),
    coverage: (sinks) => new InMemoryCoverage({ sinks }),
    secondaries: {
      'zerobus-orders': zerobus({
        table: 'main.shop.orders',
        schema: orders,
        transport: fakeZerobus(),
        row: fromJson((o: { id: string; amount: number }) => ({
          id: o.id,
          amount: BigInt(o.amount),
        })),
      }),
    },
  });
}

describe('a real topology', () => {
  it('is read by instrumentMetrics: series by sink, and the lanes histograms from its events', async () => {
    const m = manualMeter();
    cleanups.push(() => m.shutdown());
    const job = await topology();
    const instrumentation = instrumentMetrics(job, m.meter);
    cleanups.push(() => instrumentation.stop());
    await job.run();

    const metrics = await m.collect();
    const delivered = metrics.get(METRICS.sinkDeliveredRecords.name);
    expect(pointOf(delivered, { sink: 'raw', role: 'primary-raw' })?.value).toBe(51);
    expect(pointOf(delivered, { sink: 'zerobus-orders', role: 'secondary' })?.value).toBe(50);
    expect(pointOf(metrics.get(METRICS.quarantined.name), { reason: 'decode' })?.value).toBe(1);
    // Each sink's ack lane published its durable waits and confirmations.
    for (const name of [METRICS.coalesce.name, METRICS.deliveryLatency.name]) {
      const points = (metrics.get(name)?.dataPoints ?? []).map((p) => ({
        sink: p.attributes['sink'],
        count: (p.value as Histogram).count,
      }));
      const sinks = new Set(points.map((p) => p.sink));
      expect(sinks, name).toEqual(new Set(['raw', 'zerobus-orders']));
      for (const p of points) expect(p.count, name).toBeGreaterThan(0);
    }
  });

  it('is traced by traceEvents: durable waits of both sinks as spans', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    cleanups.push(() => provider.shutdown());
    const job = await topology();
    const tracing = traceEvents(provider.getTracer('thalweg-test'));
    cleanups.push(() => tracing.stop());
    await job.run();
    const durable = exporter.getFinishedSpans().filter((s) => s.name === SPAN_NAMES.durable);
    expect(new Set(durable.map((s) => s.attributes[A.sink]))).toEqual(
      new Set(['raw', 'zerobus-orders']),
    );
  });
});
