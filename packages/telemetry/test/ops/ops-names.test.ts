import { describe, expect, it } from 'vitest';
import { METRIC_DEFS, METRICS, type MetricDef } from '../../src/metric-catalog.js';
import {
  alertRules,
  dataPanels,
  DASHBOARD_FILE,
  expectedFirings,
  readOps,
  RULES_FILE,
  RULES_TEST_FILE,
  variableQuery,
  type Dashboard,
} from './ops-files.js';
import { commonLabels, exprProblems, unknownNames } from './promql-names.js';

const rulesText = readOps(RULES_FILE);
const rules = alertRules(rulesText);
const dashboard = JSON.parse(readOps(DASHBOARD_FILE)) as Dashboard;
const panels = dataPanels(dashboard);

describe('the name checks themselves', () => {
  // A catalog in which one metric was renamed and one lost a label: the
  // checks must report what the shipped files would then get wrong.
  const renamed: MetricDef[] = METRIC_DEFS.map((m) =>
    m === METRICS.pending
      ? { ...m, name: 'thalweg_ack_lane_in_flight_batches' }
      : m === METRICS.coalesce
        ? { ...m, labels: ['sink', 'role'] }
        : m,
  );

  it('report a metric the catalog no longer has', () => {
    expect(exprProblems('sum by (sink) (thalweg_ack_lane_pending_batches)', renamed)).toEqual([
      'unknown metric thalweg_ack_lane_pending_batches',
    ]);
    expect(unknownNames('see thalweg_ack_lane_pending_batches', renamed)).toEqual([
      'thalweg_ack_lane_pending_batches',
    ]);
  });

  it('report a grouping or matched label the metric lacks, and accept le on a histogram bucket', () => {
    const expr =
      'histogram_quantile(0.5, sum by (sink, stream, le) (rate(thalweg_ack_lane_coalesce_batches_bucket{stream="0"}[5m])))';
    expect(exprProblems(expr)).toEqual([]);
    expect(exprProblems(expr, renamed)).toEqual([
      'thalweg_ack_lane_coalesce_batches_bucket has no label stream to match on',
      'by (sink, stream, le): thalweg_ack_lane_coalesce_batches_bucket has no label stream',
    ]);
    expect(exprProblems('sum by (le) (thalweg_ack_lane_coalesce_batches_count)')).toEqual([
      'by (le): thalweg_ack_lane_coalesce_batches_count has no label le',
    ]);
    expect(exprProblems('max by (sink) (thalweg_flow_batch_factor)')).toEqual([
      'by (sink): thalweg_flow_batch_factor has no label sink',
    ]);
  });

  it('check each metric in an on () clause, and refuse a postfix by they cannot scope', () => {
    expect(
      exprProblems('thalweg_coverage_lag_records and on (sink) thalweg_recovery_max_lag_records'),
    ).toEqual(['on (sink): thalweg_recovery_max_lag_records has no label sink']);
    expect(exprProblems('sum(thalweg_ack_lane_pending_batches) by (sink)')).toEqual([
      'write "by (sink)" before the expression it aggregates',
    ]);
  });

  it('read every alert of the rules file with its expression', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'ThalwegAckLanePoisoned',
      'ThalwegAckLaneNotCoalescing',
      'ThalwegAckLaneSaturated',
      'ThalwegCoverageLagGrowing',
      'ThalwegRecoveryBacklogGrowing',
      'ThalwegQuarantineShedding',
      'ThalwegSourceLagGrowing',
    ]);
    expect(rules.map((r) => r.expr.match(/\bthalweg_[a-z0-9_]+/)?.[0])).not.toContain(undefined);
  });
});

describe('the shipped alert rules', () => {
  it('name only catalog metrics, in expressions and in prose', () => {
    expect(unknownNames(rulesText)).toEqual([]);
  });

  it.each(rules.map((r) => [r.alert, r] as const))('%s uses labels its metrics have', (_, rule) => {
    expect(exprProblems(rule.expr)).toEqual([]);
    const labels = commonLabels(rule.expr);
    const used = [...rule.body.matchAll(/\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)/g)].map((m) => m[1]);
    expect(used.filter((l) => l === undefined || !labels.includes(l))).toEqual([]);
  });

  it.each(rules.map((r) => [r.alert, r] as const))(
    '%s has a severity, a summary and a description',
    (_, rule) => {
      expect(rule.body).toMatch(/^\s*severity: (critical|warning|info)\s*$/m);
      expect(rule.body).toMatch(/^\s*summary: \S/m);
      expect(rule.body).toMatch(/^\s*description: \S/m);
    },
  );

  it('each fire in at least one case of the promtool rules test', () => {
    const fired = expectedFirings(readOps(RULES_TEST_FILE));
    for (const rule of rules) {
      expect(fired.get(rule.alert), rule.alert).toBeGreaterThan(0);
    }
  });
});

describe('the shipped dashboard', () => {
  it('is a schema 39 dashboard with a Prometheus data source and a sink variable', () => {
    expect(dashboard.schemaVersion).toBe(39);
    const vars = dashboard.templating.list;
    expect(vars.find((v) => v.type === 'datasource')).toMatchObject({
      name: 'datasource',
      query: 'prometheus',
    });
    const sink = vars.find((v) => v.name === 'sink');
    expect(sink && variableQuery(sink)).toBe(
      'label_values(thalweg_ack_lane_pending_batches, sink)',
    );
  });

  it('has variables that read catalog metrics and their labels', () => {
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
      const m = /^label_values\((thalweg_[a-z0-9_]+),\s*([a-z_]+)\)$/.exec(variableQuery(v));
      expect(m, v.name).not.toBeNull();
      expect(exprProblems(`max by (${m?.[2] ?? ''}) (${m?.[1] ?? ''})`), v.name).toEqual([]);
    }
  });

  it('has panels that each query the data source variable', () => {
    expect(panels.length).toBeGreaterThan(20);
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0);
      const refIds = new Set(p.targets?.map((t) => t.refId));
      expect(refIds.size, p.title).toBe(p.targets?.length);
      for (const t of p.targets ?? []) {
        expect(t.datasource, p.title).toEqual(p.datasource);
        expect(t.expr ?? '', p.title).toMatch(/\bthalweg_/);
      }
    }
  });

  it.each(panels.flatMap((p) => (p.targets ?? []).map((t) => [p.title, t.expr ?? ''] as const)))(
    '%s: %s names catalog metrics and labels',
    (_, expr) => {
      expect(exprProblems(expr)).toEqual([]);
    },
  );

  it('has a panel on every lane metric the runbook reads', () => {
    const exprs = panels.flatMap((p) => p.targets?.map((t) => t.expr ?? '') ?? []).join('\n');
    for (const m of [
      METRICS.coalesce,
      METRICS.pending,
      METRICS.saturation,
      METRICS.deliveryLatency,
      METRICS.retries,
      METRICS.poisoned,
      METRICS.budgetSaturation,
      METRICS.backpressure,
      METRICS.bottleneck,
      METRICS.batchFactor,
      METRICS.stuck,
      METRICS.quarantined,
      METRICS.quarantineShed,
      METRICS.recoveryUnclaimedWindows,
      METRICS.coverageLag,
      METRICS.sourceLag,
      METRICS.live,
      METRICS.ready,
    ]) {
      expect(exprs, m.name).toContain(m.name);
    }
  });

  it('lays its panels out on the 24-column grid without overlap, with unique ids', () => {
    const all = [...dashboard.panels, ...panels.filter((p) => !dashboard.panels.includes(p))];
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    for (const [i, a] of all.entries()) {
      expect(a.gridPos.x + a.gridPos.w, a.title).toBeLessThanOrEqual(24);
      for (const b of all.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        expect(apart, `${a.title} / ${b.title}`).toBe(true);
      }
    }
  });
});
