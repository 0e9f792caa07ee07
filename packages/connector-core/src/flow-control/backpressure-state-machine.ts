import type { BackpressureConfig } from './backpressure-config.js';
import { NonDecreasingTime } from './non-decreasing-time.js';
import {
  classifyPressure,
  type PressureCause,
  type PressureReading,
  type PressureSignals,
} from './pressure-reading.js';
import type { SourceThrottle } from './source-throttle.js';

/**
 * The four states. Timestamps are on the injected clock's timeline.
 * `calmSince` is when conditions last became clear (the hold period runs from
 * it); `belowSevereSince` is when a critical pipeline last dropped below the
 * critical thresholds (it steps down to degraded after a hold of its own).
 */
export type BackpressureState =
  | { readonly kind: 'normal'; readonly since: number }
  | {
      readonly kind: 'degraded';
      readonly since: number;
      readonly cause: PressureCause;
      readonly calmSince: number | null;
    }
  | {
      readonly kind: 'critical';
      readonly since: number;
      readonly cause: PressureCause;
      readonly belowSevereSince: number | null;
      readonly calmSince: number | null;
    }
  | { readonly kind: 'recovery'; readonly since: number };

export type BackpressureStateKind = BackpressureState['kind'];

interface DecisionBase {
  readonly state: BackpressureState;
  readonly reading: PressureReading;
  /** Multiply the configured batch size by this. */
  readonly batchFactor: number;
  /**
   * True in Critical from a severe reading until conditions are calm again
   * (they may calm before the state relaxes): the source must not fetch.
   */
  readonly pauseSource: boolean;
}

/** `transition` is returned once, on the evaluation that changed the state: log it. */
export type BackpressureDecision =
  | ({ readonly kind: 'steady' } & DecisionBase)
  | ({ readonly kind: 'transition'; readonly from: BackpressureStateKind } & DecisionBase);

export interface BackpressureStateMachineOptions {
  /** When the machine starts, on the clock's timeline. */
  readonly startedAt?: number;
  /** Raised on a severe reading in Critical, lowered once calm or on leaving Critical. */
  readonly throttle?: SourceThrottle;
}

/**
 * Pressure escalates at once and relaxes slowly. Any state jumps straight to
 * Critical on a severe reading and to Degraded on an elevated one; relaxing
 * needs conditions to stay calm for `holdMs` before Recovery, and Recovery
 * itself lasts `recoveryDwellMs` at a reduced batch size before Normal.
 * Without the hold and the dwell, the moment pressure clears the pipeline
 * runs at full size, re-saturates, and throughput becomes a sawtooth.
 *
 * Pure: time arrives as `now`, signals as arguments. An earlier `now` than
 * the previous one is read as the previous one, so a clock that steps back
 * cannot shorten a hold.
 */
export class BackpressureStateMachine {
  private current: BackpressureState;
  private readonly time: NonDecreasingTime;
  private last: BackpressureDecision;
  private pausing = false;

  constructor(
    private readonly config: BackpressureConfig,
    private readonly options: BackpressureStateMachineOptions = {},
  ) {
    const startedAt = options.startedAt ?? 0;
    this.time = new NonDecreasingTime(startedAt);
    this.current = { kind: 'normal', since: startedAt };
    this.last = this.decide(null, { level: 'clear' });
  }

  get state(): BackpressureState {
    return this.current;
  }

  /** The last decision, for readers (health, metrics) that do not drive evaluation. */
  get decision(): BackpressureDecision {
    return this.last;
  }

  evaluate(signals: PressureSignals, now: number): BackpressureDecision {
    const t = this.time.advance(now);
    const reading = classifyPressure(signals, this.config);
    const before = this.current;
    const next = this.step(before, reading, t);
    // Nothing changed: hand back the previous decision, so evaluation does not allocate.
    if (next === before && this.last.kind === 'steady' && this.last.reading === reading) {
      return this.last;
    }
    this.current = next;
    const from = next.kind === before.kind ? null : before.kind;
    // The pause is a watermark on the reading, the state its hysteresis: raised
    // on a severe reading, released once conditions are calm again, even while
    // the state (and its batch factor) still holds Critical. Held for the
    // whole hold period instead, a backlog behind a full queue would drain in
    // a second and then sit idle for the rest of it.
    const pause = next.kind === 'critical' && !isCalm(reading);
    if (pause !== this.pausing) {
      this.pausing = pause;
      if (pause) this.options.throttle?.pause();
      else this.options.throttle?.resume();
    }
    this.last = this.decide(from, reading);
    return this.last;
  }

  private step(s: BackpressureState, r: PressureReading, t: number): BackpressureState {
    const { holdMs, recoveryDwellMs } = this.config;
    if (r.level === 'severe') {
      if (s.kind !== 'critical') return critical(t, r.cause, null, null);
      if (s.belowSevereSince === null && s.calmSince === null && s.cause === r.cause) return s;
      return critical(s.since, r.cause, null, null);
    }
    if (r.level === 'elevated') {
      switch (s.kind) {
        case 'normal':
        case 'recovery':
          return degraded(t, r.cause, null);
        case 'degraded':
          if (s.calmSince === null && s.cause === r.cause) return s;
          return degraded(s.since, r.cause, null);
        case 'critical': {
          const below = s.belowSevereSince ?? t;
          if (t - below >= holdMs) return degraded(t, r.cause, null);
          if (s.belowSevereSince === below && s.calmSince === null) return s;
          return critical(s.since, s.cause, below, null);
        }
      }
    }
    // Clear, or memory that is only fragmentation: calm.
    switch (s.kind) {
      case 'normal':
        return s;
      case 'recovery':
        return t - s.since >= recoveryDwellMs ? { kind: 'normal', since: t } : s;
      case 'degraded': {
        const calm = s.calmSince ?? t;
        if (t - calm >= holdMs) return { kind: 'recovery', since: t };
        return s.calmSince === calm ? s : degraded(s.since, s.cause, calm);
      }
      case 'critical': {
        const calm = s.calmSince ?? t;
        const below = s.belowSevereSince ?? t;
        if (t - calm >= holdMs) return { kind: 'recovery', since: t };
        if (t - below >= holdMs) return degraded(t, s.cause, calm);
        if (s.calmSince === calm && s.belowSevereSince === below) return s;
        return critical(s.since, s.cause, below, calm);
      }
    }
  }

  private decide(
    from: BackpressureStateKind | null,
    reading: PressureReading,
  ): BackpressureDecision {
    const state = this.current;
    const batchFactor = factorOf(this.config, state.kind);
    const pauseSource = this.pausing;
    return from === null
      ? { kind: 'steady', state, reading, batchFactor, pauseSource }
      : { kind: 'transition', from, state, reading, batchFactor, pauseSource };
  }
}

function isCalm(reading: PressureReading): boolean {
  return reading.level === 'clear' || reading.level === 'fragmentation';
}

// Constructors rather than spreads: every state of a kind gets the same shape,
// which keeps evaluation on V8's fast property paths.
function degraded(
  since: number,
  cause: PressureCause,
  calmSince: number | null,
): BackpressureState {
  return { kind: 'degraded', since, cause, calmSince };
}

function critical(
  since: number,
  cause: PressureCause,
  belowSevereSince: number | null,
  calmSince: number | null,
): BackpressureState {
  return { kind: 'critical', since, cause, belowSevereSince, calmSince };
}

function factorOf(config: BackpressureConfig, kind: BackpressureStateKind): number {
  switch (kind) {
    case 'normal':
      return config.batchFactor.normal;
    case 'degraded':
      return config.batchFactor.degraded;
    case 'critical':
      return config.batchFactor.critical;
    case 'recovery':
      return config.batchFactor.recovery;
  }
}
