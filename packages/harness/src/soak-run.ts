import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sinkId } from '@thalweg/connector-core';
import { InMemoryLeaseStore } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { coverageReport, liveMemoryBytes, Pipeline, secondary } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { fullGc } from '@thalweg/test-services';
import {
  DEFAULT_TOLERANCES,
  judgeFlat,
  type SoakSample,
  type Tolerances,
  type Verdict,
} from './soak-flatness.js';
import { SoakSecondary } from './soak-sink.js';
import { SoakSource } from './soak-source.js';

export interface SoakOptions {
  /** Where raw and the coverage live; removed at the end unless `keep`. */
  readonly dir: string;
  readonly records: number;
  readonly partitions: number;
  readonly batchSize: number;
  readonly payloadBytes: number;
  readonly sampleMs: number;
  /** Every this many submits the secondary stalls (its lane sheds); 0: never. */
  readonly stallEvery: number;
  /**
   * A stall lasts until the lane has shed a batch (the fault the soak is
   * about happened) or the source has nothing left to read, and at most this
   * long; 0: no bound, only those conditions.
   */
  readonly stallMs: number;
  readonly keep: boolean;
  /**
   * The pipeline's byte budget (`flowControl.byteBudget.bytes`); the
   * pipeline's default when absent. A short soak needs a small one: what is
   * in flight grows until the budget is full, and a run that ends before
   * then reads that warm-up as growth.
   */
  readonly budgetBytes?: number | undefined;
  /**
   * A full collection before each memory reading, so that `heap_mb` and
   * `live_mb` are what the process retains rather than what the young
   * generation happens to hold at that instant. It costs a few
   * milliseconds a sample.
   */
  readonly collectGarbage?: boolean | undefined;
  /** What is judged flat, and how flat; `DEFAULT_TOLERANCES` when absent. */
  readonly tolerances?: Tolerances | undefined;
  /** Each sample and the result, as one JSON object per line. */
  readonly emit: (line: string) => void;
}

export interface SoakResult {
  readonly soak: 'result';
  readonly records: number;
  readonly elapsed_s: number;
  readonly records_per_s: number;
  readonly samples: number;
  readonly shed_records: number;
  readonly replayed_records: number;
  readonly stalls: number;
  readonly leases_cleared: number;
  /** The secondary's lag in `coverageReport` after the run caught up: must be 0. */
  readonly lag_after: number;
  readonly raw_durable: number;
  readonly verdicts: readonly Verdict[];
  readonly flat: boolean;
}

const RAW = sinkId('raw');
const SEC = sinkId('soak-secondary');

/**
 * The soak: raw segments on disk, a secondary whose lane sheds now and then,
 * recovery on (role `both`, leased windows) and LevelDB as the only coverage
 * tier, over `records` records. Samples what the process holds every
 * `sampleMs` — RSS, open descriptors, the coverage store's ranges and log,
 * the lease keys — and judges whether each stayed flat after warm-up.
 */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const source = new SoakSource('soak', o.partitions, o.records, o.batchSize, o.payloadBytes);
  const coverage = await LevelDbCoverage.open({
    location: join(o.dir, 'coverage'),
    sinks: [RAW, SEC],
  });
  const leases = new InMemoryLeaseStore();
  let sink: SoakSecondary | undefined;
  const shed = (): number => pipeline.stats().secondaries[0]?.shedRecords ?? 0;
  // Called from the secondary's submit, so only once the pipeline runs.
  const stall = async (): Promise<void> => {
    const before = shed();
    const until = o.stallMs > 0 ? performance.now() + o.stallMs : Number.POSITIVE_INFINITY;
    while (
      shed() === before &&
      pipeline.stats().source.records < o.records &&
      performance.now() < until
    ) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  const pipeline = await Pipeline.open({
    source,
    coverage,
    leases,
    log: () => undefined,
    config: {
      maxBatchRecords: o.batchSize,
      secondaries: { [SEC]: { maxQueuedBatches: 4 } },
      recovery: { role: 'both', windowRecords: 20_000, scanEveryMs: 100 },
      ...(o.budgetBytes === undefined
        ? {}
        : { flowControl: { byteBudget: { bytes: o.budgetBytes } } }),
    },
    primaryRaw: (confirm) =>
      RawSegmentSink.open({
        id: RAW,
        dir: join(o.dir, 'raw'),
        cluster: source.cluster,
        confirm,
        log: () => undefined,
      }),
    secondaries: [
      secondary({
        open: (target) => (sink = new SoakSecondary(SEC, target, o.stallEvery, stall)),
        derive: (batch) => ({ batch, quarantined: [] }),
      }),
    ],
  });
  const started = performance.now();
  const samples: SoakSample[] = [];
  const collect = o.collectGarbage === true ? fullGc() : undefined;
  let sampling = false;
  const sample = async (): Promise<void> => {
    if (sampling || pipeline.stats().state !== 'running') return;
    sampling = true;
    try {
      const s = await measure(pipeline, coverage, leases, started, o.records, collect);
      samples.push(s);
      o.emit(JSON.stringify(s));
    } catch {
      // The store closed under a sample at shutdown: that sample is not taken.
    } finally {
      sampling = false;
    }
  };
  const timer = setInterval(() => void sample(), o.sampleMs);
  let stats;
  try {
    stats = await pipeline.run({ untilCaughtUp: true });
  } finally {
    clearInterval(timer);
  }
  const elapsed = (performance.now() - started) / 1000;
  const reopened = await LevelDbCoverage.open({
    location: join(o.dir, 'coverage'),
    sinks: [RAW, SEC],
  });
  let lagAfter: number;
  try {
    const report = await coverageReport(reopened, RAW, [SEC]);
    lagAfter = report.find((s) => s.sink === SEC)?.lagRecords ?? -1;
  } finally {
    await reopened.close();
  }
  if (!o.keep) await rm(o.dir, { recursive: true, force: true });
  const verdicts = judgeFlat(samples, o.tolerances ?? DEFAULT_TOLERANCES);
  const result: SoakResult = {
    soak: 'result',
    records: stats.source.records,
    elapsed_s: round(elapsed),
    records_per_s: Math.round(stats.source.records / elapsed),
    samples: samples.length,
    shed_records: stats.secondaries[0]?.shedRecords ?? 0,
    replayed_records: stats.recovery?.recordsReplayed ?? 0,
    stalls: sink?.stalls ?? 0,
    leases_cleared: stats.recovery?.leasesCleared ?? 0,
    lag_after: lagAfter,
    raw_durable: stats.raw.durableRecords,
    verdicts,
    flat: verdicts.every((v) => v.flat),
  };
  o.emit(JSON.stringify(result));
  return result;
}

async function measure(
  pipeline: Pipeline,
  coverage: LevelDbCoverage,
  leases: InMemoryLeaseStore,
  started: number,
  total: number,
  collect: (() => void) | undefined,
): Promise<SoakSample> {
  const d = await coverage.diagnostics();
  const stats = pipeline.stats();
  collect?.();
  const memory = process.memoryUsage();
  return {
    soak: 'sample',
    t_s: round((performance.now() - started) / 1000),
    phase: stats.source.records < total ? 'ingest' : 'catch-up',
    records: stats.raw.durableRecords,
    rss_mb: round(memory.rss / 2 ** 20),
    heap_mb: round(memory.heapUsed / 2 ** 20),
    live_mb: round(liveMemoryBytes(memory) / 2 ** 20),
    fds: readdirSync('/proc/self/fd').length,
    coverage_ranges: d.destinations.reduce((n, k) => n + k.ranges, 0),
    coverage_log: d.unflushedEntries,
    lease_keys: (await leases.list('')).length,
    lag: pipeline.backlog().maxLagRecords,
    shed_records: stats.secondaries[0]?.shedRecords ?? 0,
    replayed_records: stats.recovery?.recordsReplayed ?? 0,
  };
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
