import {
  BackpressureStateMachine,
  BottleneckDiagnoser,
  buildHealthReport,
  ByteBudget,
  ExpansionEstimator,
  SourceThrottle,
  StuckDetector,
  type BackpressureDecision,
  type Clock,
  type DeliveryPressure,
  type FlowControlConfig,
  type HealthReport,
  type QuarantineLaneStats,
  type StuckDecision,
} from '@thalweg/connector-core';

/** What the governor samples each cycle. */
export interface FlowSample {
  readonly memoryBytes: number;
  /** The primary raw's queue fill and failing writes (`Sink.pressure`). */
  readonly raw: DeliveryPressure;
  /** The source's prefetch fill, 0..1; 0 for a source without one. */
  readonly sourceFill: number;
  /** Grows with every batch read and every record raw acknowledged. */
  readonly progress: number;
}

export interface FlowCycle {
  readonly backpressure: BackpressureDecision;
  readonly stuck: StuckDecision;
  /** True when this cycle raised or lowered the source pause. */
  readonly pauseChanged: boolean;
}

/**
 * The flow-control mechanisms of connector-core, evaluated together on one
 * cycle: the byte budget bounds bytes between fetch and raw's durable ack,
 * the state machine turns memory, channel fill and raw's failing writes into
 * a batch factor and a source pause, the stuck detector tells a deadlock
 * from a slow sink, and the bottleneck diagnosis names a sink that sets the
 * pace.
 *
 * The channel fill is the fuller of the two queues on the gating path:
 * the source's prefetch and raw's submit queue. The write-failure signal is
 * raw's segment writes failing in a row. Secondary queues are left out on
 * purpose: a full secondary sheds to gaps and must never pause the source.
 *
 * An idle pipeline is not a stuck one: a cycle that finds nothing held (no
 * bytes in the budget, both queues empty) counts as progress, so a drained
 * source with a large heap never reads as a deadlock. Stuck needs something
 * held and nothing moving.
 */
export class FlowGovernor {
  readonly budget: ByteBudget;
  readonly throttle = new SourceThrottle();
  /** The p95 expansion the budget is charged with (admission.ts). */
  readonly expansion: ExpansionEstimator;
  private readonly machine: BackpressureStateMachine;
  private readonly stuckDetector: StuckDetector;
  private readonly diagnoser: BottleneckDiagnoser;
  private wasPaused = false;
  /** Cycles that found nothing held: progress of an idle pipeline. */
  private idleCycles = 0;
  private lastFill = 0;
  private lastWriteFailures = 0;

  constructor(
    private readonly config: FlowControlConfig,
    private readonly memoryLimitBytes: number,
    private readonly clock: Clock,
  ) {
    this.budget = new ByteBudget(config.byteBudget, clock);
    this.expansion = new ExpansionEstimator(config.expansion);
    this.machine = new BackpressureStateMachine(config.backpressure, {
      startedAt: clock.now(),
      throttle: this.throttle,
    });
    this.stuckDetector = new StuckDetector(config.stuckDetector);
    this.diagnoser = new BottleneckDiagnoser(config.bottleneck);
  }

  get batchFactor(): number {
    return this.machine.decision.batchFactor;
  }

  evaluate(sample: FlowSample): FlowCycle {
    const now = this.clock.now();
    this.budget.tick();
    const saturation = this.budget.saturation;
    const memoryRatio = Math.min(1, sample.memoryBytes / this.memoryLimitBytes);
    const channelFill = Math.min(1, Math.max(sample.raw.queueFill, sample.sourceFill));
    if (channelFill === 0 && this.budget.stats().inFlightBytes === 0) this.idleCycles += 1;
    this.lastFill = channelFill;
    this.lastWriteFailures = sample.raw.consecutiveFailures;
    const backpressure = this.machine.evaluate(
      {
        memoryRatio,
        channelFill,
        consecutiveWriteFailures: sample.raw.consecutiveFailures,
      },
      now,
    );
    const stuck = this.stuckDetector.evaluate(
      { memoryRatio, channelFill, progress: sample.progress + this.idleCycles },
      now,
    );
    this.diagnoser.evaluate({ saturation, memoryRatio }, now);
    const paused = this.throttle.paused;
    const pauseChanged = paused !== this.wasPaused;
    this.wasPaused = paused;
    return { backpressure, stuck, pauseChanged };
  }

  health(started: boolean, quarantine?: QuarantineLaneStats): HealthReport {
    return buildHealthReport({
      started,
      backpressure: this.machine.state,
      stuck: this.stuckDetector.current,
      bottleneck: this.diagnoser.current,
      budget: this.budget.stats(),
      ...(quarantine === undefined ? {} : { quarantine }),
    });
  }

  describe(): {
    readonly state: string;
    readonly batchFactor: number;
    readonly stuck: string;
    readonly bottleneck: string;
    readonly channelFill: number;
    readonly rawWriteFailures: number;
    readonly expansionRatio: number;
  } {
    return {
      state: this.machine.state.kind,
      batchFactor: this.machine.decision.batchFactor,
      stuck: this.stuckDetector.current.level,
      bottleneck: this.diagnoser.current.kind,
      channelFill: this.lastFill,
      rawWriteFailures: this.lastWriteFailures,
      expansionRatio: this.expansion.ratio,
    };
  }
}
