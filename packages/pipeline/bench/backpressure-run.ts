import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sinkId, type Source } from '@thalweg/connector-core';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { Pipeline, type PipelineConfigInput } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { kafkaSource } from '@thalweg/source-kafka';
import { SlowDisk } from './slow-disk.js';

export type PhaseName = 'full' | 'slowed' | 'restored';

/** What one run is asked to do. A baseline has no `slowed` phase. */
export interface BackpressurePlan {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly groupId: string;
  /** Records in the backlog: the run ends early, and says so, when all are durable. */
  readonly records: number;
  readonly config: PipelineConfigInput;
  readonly raw: { readonly maxQueuedBytes: number; readonly maxSegmentBytes: number };
  /** The Kafka source's prefetch bound, and how long a fetch of paused partitions waits. */
  readonly sourceQueueBytes: number;
  readonly sourceMaxWaitMs: number;
  readonly fullMs: number;
  /** Null for the baseline: the disk is never slowed. */
  readonly slowed: {
    /** Bytes per second raw's segment writes are held to. */
    readonly rate: number;
    /** The slowed phase ends once the state was critical this long... */
    readonly criticalForMs: number;
    /** ...or after this long, whatever the state. */
    readonly maxMs: number;
  } | null;
  /** The restored phase ends once the state was normal this long (after any recovery)... */
  readonly normalForMs: number;
  /** ...or after this long. */
  readonly restoredMaxMs: number;
}

/** One sample of the run, every `SAMPLE_MS`. */
export interface Sample {
  readonly at: number;
  readonly phase: PhaseName;
  readonly durableRecords: number;
  readonly rss: number;
  /** Raw's queued bytes over its bound, and the Kafka source's prefetch queue over its own. */
  readonly rawQueueFill: number;
  readonly sourceQueueFill: number;
  readonly state: string;
}

export interface Transition {
  readonly at: number;
  readonly from: string;
  readonly to: string;
  readonly batchFactor: number;
}

export interface PhaseSpan {
  readonly name: PhaseName;
  readonly from: number;
  readonly to: number;
}

export interface BackpressureRun {
  readonly samples: readonly Sample[];
  /** Every `backpressure X -> Y` line the pipeline logged, in order. */
  readonly transitions: readonly Transition[];
  readonly phases: readonly PhaseSpan[];
  /** When the source's `pause` was called. */
  readonly pauses: readonly number[];
  /** When the run started reading (its first durable record): the zero of the timeline. */
  readonly startedAt: number;
  readonly backlogExhausted: boolean;
  readonly throttledMs: number;
  readonly segments: number;
}

const SAMPLE_MS = 100;
const TRANSITION = /\bbackpressure (\w+) -> (\w+) \(batch factor ([\d.]+)\)/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Kafka backlog -> pipeline -> raw segments on a disk that can be slowed:
 * full speed for `fullMs`, then (unless a baseline) the disk slowed until the
 * pipeline was critical a while, then full speed again until it is back to
 * normal. Phases end on what the pipeline reports, bounded by their maxima,
 * so a pipeline that never gets there is measured too, not waited on.
 */
export async function runBackpressure(plan: BackpressurePlan): Promise<BackpressureRun> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-bp-'));
  const disk = new SlowDisk();
  const transitions: Transition[] = [];
  const trace = process.env['THALWEG_BENCH_TRACE'] !== undefined;
  const log = (line: string): void => {
    const m = TRANSITION.exec(line);
    if (m !== null) {
      const [, from = '', to = '', factor = ''] = m;
      transitions.push({ at: performance.now(), from, to, batchFactor: Number(factor) });
    }
    if (trace) process.stderr.write(`${line}\n`);
  };
  const kafka = kafkaSource({
    mode: 'group',
    brokers: plan.brokers,
    cluster: 'bench',
    topics: [plan.topic],
    groupId: plan.groupId,
    maxQueuedBytes: plan.sourceQueueBytes,
    maxWaitTimeInMs: plan.sourceMaxWaitMs,
    log: () => undefined,
  });
  const counted = countingPauses(kafka);
  let raw: RawSegmentSink | null = null;
  const rawId = sinkId('raw');
  const pipeline = await Pipeline.open({
    source: counted.source,
    coverage: await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [rawId] }),
    log,
    config: plan.config,
    primaryRaw: async (confirm) => {
      raw = await RawSegmentSink.open({
        id: rawId,
        dir: join(dir, 'raw'),
        cluster: 'bench',
        confirm,
        writer: 'inline',
        fs: disk.fs,
        maxQueuedBytes: plan.raw.maxQueuedBytes,
        maxSegmentBytes: plan.raw.maxSegmentBytes,
        log: () => undefined,
      });
      return raw;
    },
  });
  const samples: Sample[] = [];
  const phases: PhaseSpan[] = [];
  let phase: PhaseName = 'full';
  const sample = (): Sample => {
    const st = pipeline.stats();
    const rawStats = raw?.stats();
    const src = kafka.stats();
    const s: Sample = {
      at: performance.now(),
      phase,
      durableRecords: st.raw.durableRecords,
      rss: process.memoryUsage.rss(),
      rawQueueFill: (rawStats?.queuedBytes ?? 0) / plan.raw.maxQueuedBytes,
      sourceQueueFill: src.queuedBytes / plan.sourceQueueBytes,
      state: st.flow.state,
    };
    samples.push(s);
    if (trace && samples.length % 10 === 0) {
      process.stderr.write(
        `${phase} durable ${s.durableRecords} rss ${Math.round(s.rss / 2 ** 20)}MB ` +
          `raw ${s.rawQueueFill.toFixed(2)} src ${s.sourceQueueFill.toFixed(2)} ${s.state} ` +
          `budget ${Math.round(st.flow.budget.inFlightBytes / 2 ** 20)}MB waiters ${st.flow.budget.waiters} ` +
          `fetched ${src.records} submitted ${st.raw.submittedRecords} qpauses ${src.queuePauses}\n`,
      );
    }
    return s;
  };
  const sampler = setInterval(sample, SAMPLE_MS);
  const running = pipeline.run();
  // Observed from here: a failed run ends the phases below and is thrown by `await running`.
  running.catch(() => undefined);
  const over = () => {
    const st = pipeline.stats();
    return st.state !== 'running' || st.raw.durableRecords >= plan.records;
  };
  const ended = () => pipeline.stats().state !== 'running';
  /**
   * Waits until `done` (checked per sample), `maxMs` or the run ended, and
   * unless `pastDrained`, the backlog drained. The restored phase goes on
   * past it: a catch-up that reached the head of the log is where the
   * queues empty and the machine relaxes (recovery, then normal).
   */
  const phaseUntil = async (
    name: PhaseName,
    maxMs: number,
    done: () => boolean,
    pastDrained = false,
  ) => {
    phase = name;
    const from = performance.now();
    const stop = pastDrained ? ended : over;
    while (performance.now() - from < maxMs && !done() && !stop()) await sleep(SAMPLE_MS);
    phases.push({ name, from, to: performance.now() });
  };
  /** How long the state has been `kind` without a break, as of now (0 if it is not). */
  const heldFor = (kind: string, since: number): number => {
    if (pipeline.stats().flow.state !== kind) return 0;
    const last = transitions.at(-1);
    return performance.now() - Math.max(since, last?.at ?? since);
  };
  let startedAt: number;
  let backlogExhausted: boolean;
  try {
    while (pipeline.stats().raw.durableRecords === 0 && !over()) await sleep(20);
    startedAt = performance.now();
    await phaseUntil('full', plan.fullMs, () => false);
    if (plan.slowed !== null) {
      const { rate, criticalForMs, maxMs } = plan.slowed;
      disk.rate = rate;
      const from = performance.now();
      await phaseUntil('slowed', maxMs, () => heldFor('critical', from) >= criticalForMs);
      disk.rate = null;
    }
    const from = performance.now();
    await phaseUntil(
      'restored',
      plan.restoredMaxMs,
      () => heldFor('normal', from) >= plan.normalForMs,
      true,
    );
    backlogExhausted = pipeline.stats().raw.durableRecords >= plan.records;
  } finally {
    clearInterval(sampler);
    disk.rate = null;
    await pipeline.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
  const stats = await running;
  return {
    samples,
    transitions,
    phases,
    pauses: counted.pauses,
    startedAt,
    backlogExhausted,
    throttledMs: disk.delayedMs,
    segments: stats.raw.durableBatches,
  };
}

/** `source` with the time of each `pause` call kept; everything else passes through. */
function countingPauses<S extends Source>(source: S): { source: S; pauses: readonly number[] } {
  const pauses: number[] = [];
  const proxy = new Proxy(source, {
    get(target, key) {
      if (key === 'pause') {
        return (partitions: Parameters<Source['pause']>[0]) => {
          pauses.push(performance.now());
          target.pause(partitions);
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  return { source: proxy, pauses };
}
