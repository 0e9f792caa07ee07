import type { BottleneckDiagnosisConfig } from './bottleneck-diagnosis-config.js';
import { NonDecreasingTime } from './non-decreasing-time.js';
import { assertRatio } from './flow-control-errors.js';

export interface BottleneckSignals {
  /** The byte budget's saturation, 0..1. */
  readonly saturation: number;
  readonly memoryRatio: number;
}

export type BottleneckDiagnosis =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'sink-bottleneck';
      /** Since when saturation has been high while memory stayed low. */
      readonly since: number;
      readonly saturation: number;
      readonly memoryRatio: number;
    };

const NONE: BottleneckDiagnosis = Object.freeze({ kind: 'none' });

/**
 * Names the case the raw numbers leave to inference: the budget stays full
 * while memory stays low. The records in flight are not crowding memory;
 * they are waiting for acknowledgements, so the sink sets the pace and more
 * memory or a bigger budget would not help. Not a health failure: a
 * saturated sink is slow, not dead.
 */
export class BottleneckDiagnoser {
  private since: number | null = null;
  private readonly time = new NonDecreasingTime();
  private diagnosis: BottleneckDiagnosis = NONE;

  constructor(private readonly config: BottleneckDiagnosisConfig) {}

  get current(): BottleneckDiagnosis {
    return this.diagnosis;
  }

  evaluate(signals: BottleneckSignals, now: number): BottleneckDiagnosis {
    assertRatio(signals.saturation, 'saturation');
    assertRatio(signals.memoryRatio, 'memoryRatio');
    const t = this.time.advance(now);
    const c = this.config;
    if (signals.saturation >= c.highSaturation && signals.memoryRatio < c.lowMemoryRatio) {
      this.since ??= t;
    } else {
      this.since = null;
    }
    this.diagnosis =
      this.since !== null && t - this.since >= c.sustainedMs
        ? {
            kind: 'sink-bottleneck',
            since: this.since,
            saturation: signals.saturation,
            memoryRatio: signals.memoryRatio,
          }
        : NONE;
    return this.diagnosis;
  }
}
