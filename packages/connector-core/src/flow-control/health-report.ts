import type { BackpressureState } from './backpressure-state-machine.js';
import type { BottleneckDiagnosis } from './bottleneck-diagnosis.js';
import type { ByteBudgetStats } from './byte-budget.js';
import type { QuarantineLaneStats } from './quarantine-lane.js';
import type { StuckStatus } from './stuck-detector.js';

/** What the embedder knows, gathered at the time of the probe. */
export interface HealthInputs {
  /** The pipeline has started and holds its source assignment; the embedder decides. */
  readonly started: boolean;
  readonly backpressure: BackpressureState;
  readonly stuck: StuckStatus;
  readonly bottleneck?: BottleneckDiagnosis;
  readonly budget?: ByteBudgetStats;
  readonly quarantine?: QuarantineLaneStats;
}

/** Why liveness fails. Only a deadlock qualifies; slowness never does. */
export type LiveFailure = {
  readonly kind: 'stuck';
  readonly level: 'unhealthy' | 'exit-requested';
  readonly since: number;
};

export type ReadyFailure =
  | { readonly kind: 'not-started' }
  | { readonly kind: 'source-paused'; readonly since: number }
  | { readonly kind: 'stuck'; readonly level: 'warn' | 'unhealthy' | 'exit-requested' };

export type ProbeResult<F> =
  { readonly ok: true } | { readonly ok: false; readonly failures: readonly F[] };

export interface HealthReport {
  readonly live: ProbeResult<LiveFailure>;
  readonly ready: ProbeResult<ReadyFailure>;
  /** Plain data for the probe body and for dashboards: never decides anything. */
  readonly detail: {
    readonly backpressure: BackpressureState['kind'];
    readonly stuck: StuckStatus['level'];
    readonly bottleneck: BottleneckDiagnosis['kind'];
    readonly budgetSaturation: number | null;
    readonly quarantineShed: number | null;
  };
}

/**
 * Liveness fails only when the stuck detector has escalated to unhealthy or
 * beyond: restarting a deadlocked process helps, restarting one behind a
 * saturated sink only adds a replay to the backlog. Readiness is stricter: a
 * paused source or a stuck warning takes the process out of rotation for
 * anything routed to it, without a restart.
 */
export function buildHealthReport(inputs: HealthInputs): HealthReport {
  const { stuck, backpressure } = inputs;
  const live: LiveFailure[] = [];
  if (stuck.level === 'unhealthy' || stuck.level === 'exit-requested') {
    live.push({ kind: 'stuck', level: stuck.level, since: stuck.since });
  }
  const ready: ReadyFailure[] = [];
  if (!inputs.started) ready.push({ kind: 'not-started' });
  if (backpressure.kind === 'critical') {
    ready.push({ kind: 'source-paused', since: backpressure.since });
  }
  if (stuck.level !== 'ok') ready.push({ kind: 'stuck', level: stuck.level });
  return {
    live: probe(live),
    ready: probe(ready),
    detail: {
      backpressure: backpressure.kind,
      stuck: stuck.level,
      bottleneck: inputs.bottleneck?.kind ?? 'none',
      budgetSaturation: inputs.budget?.saturation ?? null,
      quarantineShed: inputs.quarantine?.shedTotal ?? null,
    },
  };
}

function probe<F>(failures: F[]): ProbeResult<F> {
  return failures.length === 0 ? { ok: true } : { ok: false, failures };
}
