import { assertRatio, FlowControlError } from './flow-control-errors.js';
import { NonDecreasingTime } from './non-decreasing-time.js';
import type { StuckDetectorConfig } from './stuck-detector-config.js';

export interface StuckSignals {
  readonly memoryRatio: number;
  /** Fill of the fullest bounded channel, 0..1. */
  readonly channelFill: number;
  /**
   * A counter of completed work (records acknowledged downstream) that only
   * grows; any change between two evaluations counts as progress. An idle
   * source is not a deadlock: count a fetch that found the log drained as
   * progress too, or an idle process with a large heap will read as stuck.
   */
  readonly progress: number;
}

export type StuckLevel = 'ok' | 'warn' | 'unhealthy' | 'exit-requested';

export type StuckStatus =
  | { readonly level: 'ok' }
  | {
      readonly level: 'warn' | 'unhealthy' | 'exit-requested';
      /** When the stuck spell that reached this level began. */
      readonly since: number;
      /** When sustained progress began to count towards clearing, if it has. */
      readonly clearingSince: number | null;
    };

export type StuckDecision =
  | { readonly kind: 'steady'; readonly status: StuckStatus }
  | { readonly kind: 'escalated'; readonly from: StuckLevel; readonly status: StuckStatus }
  | { readonly kind: 'cleared'; readonly from: StuckLevel; readonly status: StuckStatus };

const RANK: Record<StuckLevel, number> = { ok: 0, warn: 1, unhealthy: 2, 'exit-requested': 3 };
const OK: StuckStatus = Object.freeze({ level: 'ok' });

/**
 * Tells a deadlock from a slow pipeline. Stuck means all three at once, for a
 * sustained time: memory high (something is held), channels empty (nothing
 * is queued to explain it) and no progress. A saturated sink keeps its
 * channels full, so it is never stuck here, however slow.
 *
 * Kept apart from the backpressure machine because it answers another
 * question (should this process be recycled?) on another time scale
 * (minutes), and because high memory over empty channels is precisely the
 * reading backpressure ignores as fragmentation.
 *
 * Escalation latches: a spell that reached `unhealthy` stays there until
 * progress has been made and no stuck sample has been seen for
 * `clearAfterMs`, so a single lucky ack cannot flap liveness.
 */
export class StuckDetector {
  private status: StuckStatus = OK;
  private readonly time = new NonDecreasingTime();
  private lastProgress: number | null = null;
  private spellSince: number | null = null;
  private clearingSince: number | null = null;

  constructor(private readonly config: StuckDetectorConfig) {}

  get current(): StuckStatus {
    return this.status;
  }

  evaluate(signals: StuckSignals, now: number): StuckDecision {
    assertRatio(signals.memoryRatio, 'memoryRatio');
    assertRatio(signals.channelFill, 'channelFill');
    if (!Number.isFinite(signals.progress)) {
      throw new FlowControlError(
        'TWG_FLOW_SIGNAL_INVALID',
        `progress: expected a finite counter, got ${String(signals.progress)}`,
      );
    }
    const t = this.time.advance(now);
    const c = this.config;
    // The first sample only sets the progress baseline: no verdict without a delta.
    const progressed = this.lastProgress === null || signals.progress !== this.lastProgress;
    this.lastProgress = signals.progress;
    const stuckNow =
      !progressed &&
      signals.memoryRatio >= c.highMemoryRatio &&
      signals.channelFill < c.idleChannelFill;

    const before = this.status;
    if (stuckNow) {
      this.spellSince ??= t;
      this.clearingSince = null;
    } else {
      this.spellSince = null;
      if (before.level !== 'ok' && progressed) this.clearingSince ??= t;
    }

    if (
      before.level !== 'ok' &&
      this.clearingSince !== null &&
      t - this.clearingSince >= c.clearAfterMs
    ) {
      this.status = OK;
      this.clearingSince = null;
      return { kind: 'cleared', from: before.level, status: OK };
    }
    const spell = this.spellSince;
    const spellLevel = spell === null ? 'ok' : this.levelFor(t - spell);
    if (spell !== null && spellLevel !== 'ok' && RANK[spellLevel] > RANK[before.level]) {
      this.status = { level: spellLevel, since: spell, clearingSince: null };
      return { kind: 'escalated', from: before.level, status: this.status };
    }
    if (before.level !== 'ok' && before.clearingSince !== this.clearingSince) {
      this.status = { ...before, clearingSince: this.clearingSince };
    }
    return { kind: 'steady', status: this.status };
  }

  private levelFor(stuckForMs: number): StuckLevel {
    const c = this.config;
    if (stuckForMs >= c.exitAfterMs) return 'exit-requested';
    if (stuckForMs >= c.unhealthyAfterMs) return 'unhealthy';
    if (stuckForMs >= c.warnAfterMs) return 'warn';
    return 'ok';
  }
}
