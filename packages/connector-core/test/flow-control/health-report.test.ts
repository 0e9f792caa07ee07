import { describe, expect, it } from 'vitest';
import { buildHealthReport, type HealthInputs } from '../../src/flow-control/health-report.js';

const healthy: HealthInputs = {
  started: true,
  backpressure: { kind: 'normal', since: 0 },
  stuck: { level: 'ok' },
};

describe('buildHealthReport', () => {
  it('passes both probes when started and nothing is wrong', () => {
    const r = buildHealthReport(healthy);
    expect(r.live).toEqual({ ok: true });
    expect(r.ready).toEqual({ ok: true });
    expect(r.detail).toEqual({
      backpressure: 'normal',
      stuck: 'ok',
      bottleneck: 'none',
      budgetSaturation: null,
      quarantineShed: null,
    });
  });

  it('a saturated sink keeps the process live: critical, paused, full budget, sink diagnosed', () => {
    const r = buildHealthReport({
      ...healthy,
      backpressure: {
        kind: 'critical',
        since: 5,
        cause: 'channels',
        belowSevereSince: null,
        calmSince: null,
      },
      bottleneck: { kind: 'sink-bottleneck', since: 1, saturation: 1, memoryRatio: 0.3 },
    });
    expect(r.live).toEqual({ ok: true });
    expect(r.ready).toEqual({ ok: false, failures: [{ kind: 'source-paused', since: 5 }] });
    expect(r.detail.bottleneck).toBe('sink-bottleneck');
  });

  it('fails liveness only once the stuck detector reports unhealthy or worse', () => {
    const warn = buildHealthReport({
      ...healthy,
      stuck: { level: 'warn', since: 1, clearingSince: null },
    });
    expect(warn.live.ok).toBe(true);
    expect(warn.ready).toEqual({ ok: false, failures: [{ kind: 'stuck', level: 'warn' }] });
    for (const level of ['unhealthy', 'exit-requested'] as const) {
      const r = buildHealthReport({ ...healthy, stuck: { level, since: 7, clearingSince: null } });
      expect(r.live).toEqual({ ok: false, failures: [{ kind: 'stuck', level, since: 7 }] });
    }
  });

  it('is not ready before the pipeline has started', () => {
    const r = buildHealthReport({ ...healthy, started: false });
    expect(r.ready).toEqual({ ok: false, failures: [{ kind: 'not-started' }] });
    expect(r.live.ok).toBe(true);
  });
});
