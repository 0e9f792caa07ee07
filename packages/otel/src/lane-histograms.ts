import { ValueType, type Attributes, type Histogram, type Meter } from '@opentelemetry/api';
import { DeliveryMetrics, events } from '@thalweg/connector-core';
import { METRICS, type MetricDef } from '@thalweg/telemetry';
import { guarded } from './guarded.js';
import type { LaneRoles } from './lane-roles.js';

/**
 * The catalog's two lane histograms, recorded as each burst and each batch
 * happens: the OpenTelemetry API has no observable histogram, so they
 * cannot be read off the lanes' own histograms at collection as the
 * counters and gauges are. The `durable` channel gives each burst's
 * coalesce ratio, the `confirmed` channel each batch's delivery latency.
 * Their buckets are the lanes' own, so an OpenTelemetry histogram and the
 * Prometheus exposition of the same lane have the same bounds.
 *
 * The events carry the sink and its stream; the role comes from the
 * topology's lanes. A sink its lanes do not name (a sink that exposes no
 * lane metrics, or one of another topology in the same process: the
 * channels are process-wide) is recorded without a role rather than lost.
 *
 * Returns the function that unsubscribes both.
 */
export function recordLaneHistograms(meter: Meter, roles: LaneRoles): () => void {
  // A lane's metrics, read only for their bounds: the buckets are written in one place.
  const lane = new DeliveryMetrics();
  const coalesce = histogram(meter, METRICS.coalesce, ValueType.INT, lane.coalesce.bounds);
  const latency = histogram(
    meter,
    METRICS.deliveryLatency,
    ValueType.DOUBLE,
    lane.deliveryLatencyMs.bounds.map((ms) => ms / 1000),
  );
  const attributes = (sink: string, stream: string): Attributes => {
    const role = roles.of(sink);
    return role === undefined ? { sink, stream } : { sink, role, stream };
  };
  const offDurable = events.durable.subscribe(
    guarded('recording the coalesce histogram', (e) => {
      coalesce.record(e.batches, attributes(e.sink, e.stream));
    }),
  );
  const offConfirmed = events.confirmed.subscribe(
    guarded('recording the delivery latency histogram', (e) => {
      latency.record(e.latencyMs / 1000, attributes(e.sink, e.stream));
    }),
  );
  return () => {
    offDurable();
    offConfirmed();
  };
}

function histogram(
  meter: Meter,
  def: MetricDef,
  valueType: ValueType,
  bounds: readonly number[],
): Histogram {
  return meter.createHistogram(def.name, {
    description: def.help,
    unit: def.unit,
    valueType,
    advice: { explicitBucketBoundaries: [...bounds] },
  });
}
