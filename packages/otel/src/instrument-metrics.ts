import type {
  BatchObservableCallback,
  BatchObservableResult,
  Meter,
  Observable,
} from '@opentelemetry/api';
import { collectMetrics, METRIC_DEFS, type MetricDef, type Observed } from '@thalweg/telemetry';
import { recordLaneHistograms } from './lane-histograms.js';
import { LaneRoles } from './lane-roles.js';

export interface InstrumentMetricsOptions {
  /**
   * Record the two lane histograms (coalesce batches, delivery latency)
   * from the `durable` and `confirmed` channels. Subscribing makes every
   * ack lane publish one message per burst and per batch; `false` leaves
   * the channels without a subscriber, and the histograms out.
   *
   * @defaultValue true
   */
  readonly histograms?: boolean;
}

/** What `instrumentMetrics` started, until `stop`. */
export interface MetricsInstrumentation {
  /** Removes the observable callback and unsubscribes the channels; idempotent. */
  stop(): void;
}

/**
 * Exposes the metric catalog of `@thalweg/telemetry` through an
 * OpenTelemetry meter: every counter as an ObservableCounter and every
 * gauge as an ObservableGauge, under the catalog's names, units and help,
 * with its labels as attributes. One batch callback reads the whole
 * topology once per collection (`collectMetrics`), so the series of one
 * export are of one instant and the topology is read once, not once per
 * instrument. The two histograms are recorded as events happen (see
 * `InstrumentMetricsOptions.histograms`): they count from this call on,
 * where the Prometheus exposition counts from the lane's start.
 *
 * Which exporter, how often and with which resource is the application's
 * SDK to decide; this package depends on `@opentelemetry/api` alone.
 */
export function instrumentMetrics(
  observed: Observed,
  meter: Meter,
  options: InstrumentMetricsOptions = {},
): MetricsInstrumentation {
  const roles = new LaneRoles(observed);
  const observables = new Map<MetricDef, Observable>();
  for (const def of METRIC_DEFS) {
    const o = { description: def.help, unit: def.unit };
    if (def.kind === 'counter') observables.set(def, meter.createObservableCounter(def.name, o));
    if (def.kind === 'gauge') observables.set(def, meter.createObservableGauge(def.name, o));
  }

  const callback: BatchObservableCallback = (result) => {
    const lanes = observed.lanes();
    roles.refresh(lanes);
    observe(result, observables, {
      stats: () => observed.stats(),
      health: () => observed.health(),
      lanes: () => lanes,
      sourceLag: () => observed.sourceLag(),
    });
  };
  const list = [...observables.values()];
  meter.addBatchObservableCallback(callback, list);
  const unsubscribe = options.histograms === false ? null : recordLaneHistograms(meter, roles);

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      meter.removeBatchObservableCallback(callback, list);
      unsubscribe?.();
    },
  };
}

function observe(
  result: BatchObservableResult,
  observables: ReadonlyMap<MetricDef, Observable>,
  observed: Observed,
): void {
  for (const family of collectMetrics(observed)) {
    const instrument = observables.get(family.def);
    if (instrument === undefined) continue; // a histogram: recorded from the channels
    for (const sample of family.samples) {
      if ('value' in sample) result.observe(instrument, sample.value, sample.labels);
    }
  }
}
