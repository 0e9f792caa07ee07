import type { PipelineStats } from '@thalweg/pipeline';
import { describe, expect, it } from 'vitest';
import { collectMetrics, METRICS, type MetricFamily, type Sample } from '../src/index.js';
import { filesTopology } from './files-topology.js';

function samples(families: readonly MetricFamily[], name: string): readonly Sample[] {
  const family = families.find((f) => f.def.name === name);
  if (family === undefined) throw new Error(`no family ${name}`);
  return family.samples;
}

function value(families: readonly MetricFamily[], name: string, labels: object): number {
  const found = samples(families, name).find((s) =>
    Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found === undefined || !('value' in found))
    throw new Error(`no ${name} ${JSON.stringify(labels)}`);
  return found.value;
}

describe('collectMetrics', () => {
  it('reads a finished topology: per-sink records, quarantine by reason, health', async () => {
    const job = await filesTopology(['{"id":"a","amount":3}', '{"id":"b","amount":5}', 'not json']);
    await job.run();
    const families = collectMetrics(job);

    expect(families.map((f) => f.def)).toEqual(Object.values(METRICS));
    expect(value(families, 'thalweg_sink_delivered_records_total', { sink: 'raw' })).toBe(3);
    expect(
      value(families, 'thalweg_sink_delivered_records_total', { sink: 'zerobus-orders' }),
    ).toBe(2);
    expect(value(families, 'thalweg_quarantine_records_total', { reason: 'decode' })).toBe(1);
    expect(value(families, 'thalweg_source_records_total', {})).toBe(3);
    // A stopped pipeline is not ready; it is still live (nothing is stuck).
    expect(value(families, 'thalweg_health_live', {})).toBe(1);
    expect(value(families, 'thalweg_health_ready', {})).toBe(0);
  });

  it('reports the coordination tier: up by mode, members, the last mode-1 backup; nothing without one', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    await job.run();
    const withHealth = (coordination: PipelineStats['coordination']) =>
      collectMetrics({
        stats: () => ({ ...job.stats(), coordination }),
        health: () => job.health(),
        lanes: () => job.lanes(),
        sourceLag: () => job.sourceLag(),
      });
    expect(samples(collectMetrics(job), 'thalweg_coordination_up')).toEqual([]);
    const lost = withHealth({ kind: 'no-quorum', members: 3, reachable: 1, reason: 'test' });
    expect(value(lost, 'thalweg_coordination_up', { mode: '3' })).toBe(0);
    expect(value(lost, 'thalweg_coordination_members', {})).toBe(3);
    expect(value(lost, 'thalweg_coordination_members_reachable', {})).toBe(1);
    const one = withHealth({ kind: 'single-node', lastBackupAt: 1_700_000_000_500 });
    expect(value(one, 'thalweg_coordination_up', { mode: '1' })).toBe(1);
    expect(value(one, 'thalweg_coordination_last_backup_timestamp_seconds', {})).toBe(
      1_700_000_000.5,
    );
    expect(samples(one, 'thalweg_coordination_members')).toEqual([]);
    expect(samples(withHealth({ kind: 'off' }), 'thalweg_coordination_up')).toEqual([]);
  });

  it('reports the loss window of a stream that cannot resume and each stream’s dedup counts', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    await job.run();
    const stats = job.stats();
    const withStats = (over: Partial<PipelineStats>) =>
      collectMetrics({
        stats: () => ({ ...stats, ...over }),
        health: () => job.health(),
        lanes: () => job.lanes(),
        sourceLag: () => job.sourceLag(),
      });
    // A source that reads again what it lost has no window, so no sample.
    expect(samples(collectMetrics(job), 'thalweg_source_loss_window_records')).toEqual([]);
    const window = withStats({ source: { ...stats.source, lossWindowRecords: 42 } });
    expect(value(window, 'thalweg_source_loss_window_records', {})).toBe(42);
    const dedup = withStats({
      dedup: [
        {
          stream: 'orders',
          checked: 200,
          dropped: 10,
          skipped: 3,
          unhashable: 1,
          duplicateRate: 0.05,
        },
        { stream: 'clicks', checked: 0, dropped: 0, skipped: 0, unhashable: 0, duplicateRate: 0 },
      ],
    });
    expect(value(dedup, 'thalweg_dedup_checked_records_total', { stream: 'orders' })).toBe(200);
    expect(value(dedup, 'thalweg_dedup_dropped_records_total', { stream: 'orders' })).toBe(10);
    expect(value(dedup, 'thalweg_dedup_skipped_records_total', { stream: 'orders' })).toBe(3);
    expect(value(dedup, 'thalweg_dedup_duplicate_ratio', { stream: 'orders' })).toBe(0.05);
    expect(value(dedup, 'thalweg_dedup_checked_records_total', { stream: 'clicks' })).toBe(0);
    expect(samples(collectMetrics(job), 'thalweg_dedup_checked_records_total')).toEqual([]);
  });

  it('marks exactly one state of each enumerated gauge', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    await job.run();
    const families = collectMetrics(job);
    for (const name of [
      'thalweg_flow_backpressure_state',
      'thalweg_flow_stuck_level',
      'thalweg_flow_bottleneck',
    ]) {
      const on = samples(families, name).filter((s) => 'value' in s && s.value === 1);
      expect(on, name).toHaveLength(1);
    }
    expect(value(families, 'thalweg_flow_backpressure_state', { state: 'normal' })).toBe(1);
  });

  it('labels every sample with exactly its metric’s labels', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}', '{"id":"b","amount":2}']);
    await job.run();
    for (const { def, samples: all } of collectMetrics(job)) {
      const want = [...def.labels].sort();
      for (const s of all) expect(Object.keys(s.labels).sort(), def.name).toEqual(want);
    }
  });
});
