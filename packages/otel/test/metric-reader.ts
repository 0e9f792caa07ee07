import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import type { Meter } from '@opentelemetry/api';

/** A reader the test collects from by hand: no timer, no exporter. */
class ManualReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** A meter whose metrics the test reads with `collect()`, by instrument name. */
export function manualMeter(): {
  readonly meter: Meter;
  collect(): Promise<Map<string, MetricData>>;
  shutdown(): Promise<void>;
} {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    meter: provider.getMeter('thalweg-test'),
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, 'collection failed');
      const out = new Map<string, MetricData>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const m of scope.metrics) out.set(m.descriptor.name, m);
      }
      return out;
    },
    shutdown: () => provider.shutdown(),
  };
}

/** The data point of `metric` whose attributes are exactly `attributes`. */
export function pointOf<T = number>(
  metric: MetricData | undefined,
  attributes: Record<string, string>,
): DataPoint<T> | undefined {
  const points = (metric?.dataPoints ?? []) as DataPoint<T>[];
  const want = JSON.stringify(Object.entries(attributes).sort());
  return points.find((p) => JSON.stringify(Object.entries(p.attributes).sort()) === want);
}

export type HistogramPoint = DataPoint<Histogram>;
