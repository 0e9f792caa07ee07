import type {
  QuarantineLaneConfig,
  QuarantineLaneStats,
  QuarantineReason,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { CoverageRecorder, type RecorderStats } from './coverage-recorder.js';
import { CoveredSpans } from './covered-spans.js';
import { PipelineError } from './errors.js';
import { QuarantineRouter, type QuarantineStats } from './quarantine-router.js';
import type { QuarantineWriter } from './topology.js';

/** What one lane owns alone: the coverage recorder its receipts go to, and its quarantine. */
export interface LaneOwned {
  readonly recorder: CoverageRecorder;
  readonly quarantine: QuarantineRouter;
  /** What its sink durably holds, as far as this process knows (covered-spans.ts). */
  readonly covered: CoveredSpans;
}

export interface PerLaneOptions {
  readonly coverage: CoverageStore;
  readonly secondaries: number;
  readonly quarantine: QuarantineLaneConfig;
  readonly writer: QuarantineWriter | undefined;
  readonly log: (line: string) => void;
  /** A coverage refusal no retry can change, from any lane: it stops the pipeline. */
  readonly onFatal: (error: PipelineError) => void;
}

/**
 * Per-lane isolation: raw and each secondary get their own coverage recorder
 * and quarantine router, so nothing one lane does at run time waits on
 * another's. A recorder writes one round at a time, and a quarantine router
 * feeds its writer one entry at a time: shared, a secondary whose coverage
 * writes (or dead-letter writes) are slow would hold raw's behind them, and
 * raw's coverage lag with it. Each lane's round carries only its own
 * receipts, so one lane's refused write never keeps another's receipts back.
 *
 * The coverage store and the user's quarantine writer are still one object
 * each; lanes call them concurrently (a store orders its own writes).
 */
export class PerLane {
  readonly raw: LaneOwned;
  /** By the secondary's position in the spec. */
  readonly secondaries: readonly LaneOwned[];

  constructor(options: PerLaneOptions) {
    const own = (lane: string): LaneOwned => {
      const covered = new CoveredSpans();
      return {
        recorder: new CoverageRecorder(
          options.coverage,
          (line) => options.log(`${lane}: ${line}`),
          options.onFatal,
          (receipts) => {
            for (const r of receipts) covered.add(r.span);
          },
        ),
        quarantine: new QuarantineRouter(options.quarantine, options.writer, (line) =>
          options.log(`${lane}: ${line}`),
        ),
        covered,
      };
    };
    this.raw = own('primary raw');
    this.secondaries = Array.from({ length: options.secondaries }, (_, i) =>
      own(`secondaries[${i}]`),
    );
  }

  /** The `i`-th secondary's own parts. */
  secondary(i: number): LaneOwned {
    const own = this.secondaries[i];
    if (own === undefined) {
      throw new PipelineError('TWG_PIPELINE_STATE', `no lane for secondaries[${i}]`);
    }
    return own;
  }

  all(): readonly LaneOwned[] {
    return [this.raw, ...this.secondaries];
  }

  startQuarantine(): void {
    for (const lane of this.all()) lane.quarantine.start();
  }

  /** One flow cycle's round of every lane's coverage; each lane's runs on its own. */
  async flushCoverage(): Promise<void> {
    await Promise.all(this.all().map((l) => l.recorder.flush()));
  }

  /** Shutdown: false if some lane's coverage could not all be written. */
  async drainCoverage(): Promise<boolean> {
    const drained = await Promise.all(this.all().map((l) => l.recorder.drain()));
    return drained.every((d) => d);
  }

  /** What every secondary's ack lane handed over, written (what recovery plans from). */
  async writeSecondariesHandedOver(): Promise<boolean> {
    const written = await Promise.all(this.secondaries.map((l) => l.recorder.writeHandedOver()));
    return written.every((w) => w);
  }

  dropUnwrittenQuarantine(): void {
    for (const lane of this.all()) lane.quarantine.dropUnwritten();
  }

  async stopQuarantine(deadlineMs: number): Promise<void> {
    await Promise.all(this.all().map((l) => l.quarantine.stop(deadlineMs)));
  }

  coverageStats(): RecorderStats {
    return this.all()
      .map((l) => l.recorder.stats())
      .reduce((a, b) => ({
        recorded: a.recorded + b.recorded,
        buffered: a.buffered + b.buffered,
        failures: a.failures + b.failures,
        abandoned: a.abandoned + b.abandoned,
      }));
  }

  quarantineStats(): QuarantineStats {
    return this.all()
      .map((l) => l.quarantine.stats())
      .reduce((a, b) => ({
        byReason: sumReasons(a.byReason, b.byReason),
        written: a.written + b.written,
        writeFailures: a.writeFailures + b.writeFailures,
        discarded: a.discarded + b.discarded,
        lane: sumLanes(a.lane, b.lane),
      }));
  }

  /** Every lane's quarantine as one, for health: capacity and depth add up. */
  quarantineLaneStats(): QuarantineLaneStats {
    return this.all()
      .map((l) => l.quarantine.laneStats())
      .reduce(sumLanes);
  }
}

function sumReasons<K extends QuarantineReason>(
  a: Readonly<Partial<Record<K, number>>>,
  b: Readonly<Partial<Record<K, number>>>,
): Partial<Record<K, number>> {
  const sum: Partial<Record<K, number>> = { ...a };
  for (const [k, n] of Object.entries(b) as [K, number][]) sum[k] = (sum[k] ?? 0) + n;
  return sum;
}

function sumLanes(a: QuarantineLaneStats, b: QuarantineLaneStats): QuarantineLaneStats {
  const shed = { ...a.shed };
  for (const [k, n] of Object.entries(b.shed) as [QuarantineReason, number][]) {
    shed[k] = shed[k] + n;
  }
  return {
    capacity: a.capacity + b.capacity,
    depth: a.depth + b.depth,
    heldBytes: a.heldBytes + b.heldBytes,
    offered: a.offered + b.offered,
    shed,
    shedTotal: a.shedTotal + b.shedTotal,
  };
}
