import {
  BackpressureStateMachine,
  BottleneckDiagnoser,
  buildHealthReport,
  ByteBudget,
  SourceThrottle,
  StuckDetector,
  type BackpressureDecision,
  type Clock,
  type FlowControlConfig,
  type HealthReport,
  type QuarantineLaneStats,
  type StuckDecision,
} from '@thalweg/connector-core';

/** What the governor samples each cycle. */
export interface FlowSample {
  readonly memoryBytes: number;
  readonly consecutiveWriteFailures: number;
  /** Grows with every record raw acknowledged and every fetch that found the source drained. */
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
 * the state machine turns memory and budget saturation into a batch factor
 * and a source pause, the stuck detector tells a deadlock from a slow sink,
 * and the bottleneck diagnosis names a sink that sets the pace.
 *
 * The state machine decides on memory and raw's write failures. The byte
 * budget's saturation is passed as the channel fill, but capped just below
 * the degraded threshold: it tells the machine that high memory is explained
 * by records in flight (pressure, not allocator fragmentation), and never
 * drives the state by itself. The budget already stops admission when it is
 * full; reading a busy backlog as Critical would pause the source for a
 * whole hold period after the budget frees. Secondary queues are left out
 * on purpose: a full secondary sheds to gaps and must never pause the
 * source. Saturation also drives the bottleneck diagnosis.
 */
export class FlowGovernor {
  readonly budget: ByteBudget;
  readonly throttle = new SourceThrottle();
  private readonly machine: BackpressureStateMachine;
  private readonly stuckDetector: StuckDetector;
  private readonly diagnoser: BottleneckDiagnoser;
  private wasPaused = false;
  private readonly fillCap: number;

  constructor(
    private readonly config: FlowControlConfig,
    private readonly memoryLimitBytes: number,
    private readonly clock: Clock,
  ) {
    this.budget = new ByteBudget(config.byteBudget, clock);
    this.fillCap = config.backpressure.channels.degradedFill * 0.99;
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
    const channelFill = Math.min(saturation, this.fillCap);
    const backpressure = this.machine.evaluate(
      {
        memoryRatio,
        channelFill,
        consecutiveWriteFailures: sample.consecutiveWriteFailures,
      },
      now,
    );
    const stuck = this.stuckDetector.evaluate(
      { memoryRatio, channelFill, progress: sample.progress },
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
  } {
    return {
      state: this.machine.state.kind,
      batchFactor: this.machine.decision.batchFactor,
      stuck: this.stuckDetector.current.level,
      bottleneck: this.diagnoser.current.kind,
    };
  }
}
