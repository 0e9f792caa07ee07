import { QUARANTINE_REASONS, type Histogram } from '@thalweg/connector-core';
import { METRICS, type MetricDef } from './metric-catalog.js';
import type { HistogramValue, Labels, MetricFamily, Sample } from './metric-family.js';
import type { Observed } from './observed.js';

const BACKPRESSURE_STATES = ['normal', 'degraded', 'critical', 'recovery'] as const;
const BOTTLENECKS = ['none', 'sink-bottleneck'] as const;
const STUCK_LEVELS = ['ok', 'warn', 'unhealthy', 'exit-requested'] as const;

/**
 * Reads every catalog metric off a running topology, now: the ack lanes'
 * own metrics objects, the pipeline's statistics, its health and its source
 * lag. Families come in catalog order; a family with nothing to report
 * (no recovery in the `ingest` role, no lag seen yet) has no samples.
 */
export function collectMetrics(observed: Observed): MetricFamily[] {
  const out = new Map<MetricDef, Sample[]>();
  for (const m of Object.values(METRICS)) out.set(m, []);
  const add = (m: MetricDef, labels: Labels, value: number): void => {
    out.get(m)?.push({ labels, value });
  };
  const addHistogram = (m: MetricDef, labels: Labels, histogram: HistogramValue): void => {
    out.get(m)?.push({ labels, histogram });
  };

  for (const lane of observed.lanes()) {
    const l = { sink: lane.sink, role: lane.role, stream: lane.stream };
    const d = lane.metrics;
    addHistogram(METRICS.coalesce, l, histogramValue(d.coalesce, 1));
    addHistogram(METRICS.deliveryLatency, l, histogramValue(d.deliveryLatencyMs, 1000));
    add(METRICS.pending, l, d.pending.value);
    add(METRICS.saturation, l, d.saturation.value);
    add(METRICS.retries, l, d.retries.value);
    add(METRICS.poisoned, l, d.poisoned.value);
    add(METRICS.consecutiveFailures, l, d.consecutiveFailures.value);
    add(METRICS.confirmFailures, l, d.confirmFailures.value);
    add(METRICS.submitted, l, d.submitted.value);
    add(METRICS.delivered, l, d.delivered.value);
  }

  const s = observed.stats();
  add(
    METRICS.sinkDeliveredRecords,
    { sink: s.raw.sink, role: 'primary-raw' },
    s.raw.durableRecords,
  );
  for (const sec of s.secondaries) {
    add(METRICS.sinkDeliveredRecords, { sink: sec.sink, role: 'secondary' }, sec.deliveredRecords);
    add(METRICS.sinkShedBatches, { sink: sec.sink }, sec.shedBatches);
    add(METRICS.sinkShedRecords, { sink: sec.sink }, sec.shedRecords);
    add(METRICS.sinkQueuedBatches, { sink: sec.sink }, sec.queuedBatches);
  }

  const backlog = s.recovery?.backlog ?? null;
  if (backlog !== null) {
    add(METRICS.recoveryUnclaimedWindows, {}, backlog.unclaimedWindows);
    add(METRICS.recoveryMaxLag, {}, backlog.maxLagRecords);
    add(METRICS.rawUnread, {}, backlog.rawUnreadRecords);
    for (const [sink, lag] of Object.entries(backlog.lagBySink)) {
      add(METRICS.coverageLag, { sink }, lag);
    }
  }
  const r = s.recovery;
  if (r !== null) {
    const windows = {
      replayed: r.windowsReplayed,
      lost: r.windowsLost,
      'timed-out': r.windowsTimedOut,
      failed: r.windowsFailed,
      trimmed: r.windowsTrimmed,
      unread: r.windowsUnread,
    };
    for (const [outcome, n] of Object.entries(windows)) {
      add(METRICS.recoveryWindows, { outcome }, n);
    }
    add(METRICS.recoveryRecords, {}, r.recordsReplayed);
  }

  const f = s.flow;
  add(METRICS.budgetSaturation, {}, f.budget.saturation);
  add(METRICS.budgetInFlight, {}, f.budget.inFlightBytes);
  add(METRICS.budgetLimit, {}, f.budget.limitBytes);
  oneHot(add, METRICS.bottleneck, 'diagnosis', BOTTLENECKS, f.bottleneck);
  oneHot(add, METRICS.backpressure, 'state', BACKPRESSURE_STATES, f.state);
  oneHot(add, METRICS.stuck, 'level', STUCK_LEVELS, f.stuck);
  add(METRICS.batchFactor, {}, f.batchFactor);
  add(METRICS.sourcePaused, {}, f.sourcePaused ? 1 : 0);
  add(METRICS.channelFill, {}, f.channelFill);

  const q = s.quarantine;
  for (const reason of QUARANTINE_REASONS) {
    add(METRICS.quarantined, { reason }, q.byReason[reason] ?? 0);
    add(METRICS.quarantineShed, { reason }, q.lane.shed[reason]);
  }
  add(METRICS.quarantineDepth, {}, q.lane.depth);

  add(METRICS.sourceRecords, {}, s.source.records);
  add(METRICS.sourceBytes, {}, s.source.bytes);
  if (s.source.lossWindowRecords !== null) {
    add(METRICS.sourceLossWindow, {}, s.source.lossWindowRecords);
  }
  for (const lag of observed.sourceLag()) {
    const { topic, partition } = lag.partition;
    add(METRICS.sourceLag, { topic, partition: String(partition) }, lag.lag);
  }
  for (const d of s.dedup) {
    add(METRICS.dedupChecked, { stream: d.stream }, d.checked);
    add(METRICS.dedupDropped, { stream: d.stream }, d.dropped);
    add(METRICS.dedupSkipped, { stream: d.stream }, d.skipped);
    add(METRICS.dedupRate, { stream: d.stream }, d.duplicateRate);
  }
  const c = s.coordination;
  if (c !== null && c.kind !== 'off') {
    const mode = c.kind === 'single-node' ? '1' : String(c.members);
    add(METRICS.coordinationUp, { mode }, c.kind === 'no-quorum' ? 0 : 1);
    if (c.kind === 'single-node') {
      if (c.lastBackupAt !== null) add(METRICS.coordinationBackup, {}, c.lastBackupAt / 1000);
    } else {
      add(METRICS.coordinationMembers, {}, c.members);
      add(METRICS.coordinationReachable, {}, c.reachable);
    }
  }
  add(METRICS.commits, {}, s.positions.commits);
  add(METRICS.commitFailures, {}, s.positions.failures);
  add(METRICS.coverageRecorded, {}, s.coverage.recorded);
  add(METRICS.coverageFailures, {}, s.coverage.failures);

  const health = observed.health();
  add(METRICS.live, {}, health.live.ok ? 1 : 0);
  add(METRICS.ready, {}, health.ready.ok ? 1 : 0);

  return [...out].map(([def, samples]) => ({ def, samples }));
}

/** A histogram's cumulative buckets, its bounds and sum divided by `scale` (ms to s). */
function histogramValue(h: Histogram, scale: number): HistogramValue {
  return {
    buckets: h.buckets().map((b) => ({ le: b.le / scale, count: b.count })),
    sum: h.sum / scale,
    count: h.count,
  };
}

/** An enumerated state as one series per value: 1 for the current one. */
function oneHot(
  add: (m: MetricDef, labels: Labels, value: number) => void,
  m: MetricDef,
  label: string,
  values: readonly string[],
  current: string,
): void {
  for (const v of values) add(m, { [label]: v }, v === current ? 1 : 0);
  if (!values.includes(current)) add(m, { [label]: current }, 1);
}
