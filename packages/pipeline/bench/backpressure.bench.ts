import { emit } from './bench-source.js';
import {
  runBackpressure,
  type BackpressurePlan,
  type BackpressureRun,
  type PhaseName,
  type Sample,
} from './backpressure-run.js';
import { benchBrokers, benchKafka, deleteTopic, produceBacklog } from './kafka-backlog.js';

/**
 * The backpressure state machine against a deep Kafka backlog, with a slow
 * disk under raw for a while: full speed, then raw's segment writes held to
 * SLOW_RATE, then full speed again until the backlog is drained and the
 * pipeline has caught up with the head of the log. Raw sets the pace of a
 * catch-up, so its queue (sized below the byte budget) and the source's
 * prefetch run full even at full speed: by the design's thresholds that is
 * degraded or critical, the source paused in short spells (the pause is a
 * watermark released once calm, ADR 0024) while raw's queue keeps it busy.
 * The slowed disk holds it critical; once caught up the queues empty and
 * the machine relaxes through recovery (after the hold) to normal (after
 * the dwell). The hold and the dwell are shortened from their production
 * defaults (30 s and 60 s) so the runs take under a minute (producing the
 * backlog takes about as long again); every setting is printed in the line.
 * Each phase reports raw's and the source's queue fill.
 *
 * `states_visited` is read from the pipeline's own transition log lines,
 * `pauses` counts the source's `pause` calls, `throughput_cv` is the
 * coefficient of variation of per-second durable records over the
 * steady-state seconds of the full-speed phases (after a warm-up, and before
 * the backlog was drained). A baseline then reads the
 * same backlog in the same process, never slowed, for the throughput and cv
 * of this machine today (its RSS includes what the first run left).
 *
 * THALWEG_BENCH_BP_RECORDS sets the backlog (default 1,000,000 records of
 * THALWEG_BENCH_BP_RECORD_BYTES, default 1024: 977 MB, about 17 s of full
 * speed here, eight times the budget; a run that drains it stops early and
 * says so).
 */
const MiB = 1024 * 1024;
const RECORDS = Number(process.env['THALWEG_BENCH_BP_RECORDS'] ?? 1_000_000);
const RECORD_BYTES = Number(process.env['THALWEG_BENCH_BP_RECORD_BYTES'] ?? 1024);
const PARTITIONS = 4;
const BUDGET = 128 * MiB;
const MEMORY_LIMIT = 512 * MiB;
const HOLD_MS = 2500;
const DWELL_MS = 4000;
const EVALUATE_MS = 100;
const RAW_QUEUE = 32 * MiB;
const RAW_SEGMENT = 8 * MiB;
const SOURCE_QUEUE = 64 * MiB;
/**
 * kafkajs sleeps this long when every partition is paused (by flow control
 * or the source's own prefetch bound), whatever resumes them meanwhile: the
 * source's default, 500 ms (kafkajs's own 5 s made each pause seconds
 * without a fetch).
 */
const SOURCE_MAX_WAIT_MS = 500;
const SLOW_RATE = 4 * MiB;
const FULL_MS = 6000;
/** Seconds left out at the start of a full-speed phase: the consumer joining, the budget's slow start. */
const WARMUP_MS = 2000;

const started = performance.now();
const brokers = benchBrokers('backpressure');
const kafka = benchKafka(brokers);
const topic = `bench-bp-${Date.now().toString(36)}`;
const rssStart = process.memoryUsage.rss();

function plan(groupId: string, slowed: boolean): BackpressurePlan {
  return {
    brokers,
    topic,
    groupId: `${topic}-${groupId}`,
    records: RECORDS,
    config: {
      memoryLimitBytes: MEMORY_LIMIT,
      evaluateEveryMs: EVALUATE_MS,
      flowControl: {
        byteBudget: { bytes: BUDGET, warmUp: { timeoutMs: WARMUP_MS } },
        backpressure: { holdMs: HOLD_MS, recoveryDwellMs: DWELL_MS },
      },
    },
    raw: { maxQueuedBytes: RAW_QUEUE, maxSegmentBytes: RAW_SEGMENT },
    sourceQueueBytes: SOURCE_QUEUE,
    sourceMaxWaitMs: SOURCE_MAX_WAIT_MS,
    fullMs: slowed ? FULL_MS : FULL_MS + 4000,
    slowed: slowed ? { rate: SLOW_RATE, criticalForMs: 2000, maxMs: 12_000 } : null,
    normalForMs: 2500,
    restoredMaxMs: slowed ? HOLD_MS + DWELL_MS + 30_000 : 0,
  };
}

/** Durable records per second over [from, to], one value per second of samples. */
function perSecond(samples: readonly Sample[], from: number, to: number): number[] {
  const within = samples.filter((s) => s.at >= from && s.at <= to);
  const rates: number[] = [];
  let prev = within[0];
  for (const s of within) {
    if (prev === undefined || s.at - prev.at < 1000) continue;
    rates.push(((s.durableRecords - prev.durableRecords) * 1000) / (s.at - prev.at));
    prev = s;
  }
  return rates;
}

function meanOf(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Standard deviation over mean; NaN (printed null) with fewer than two seconds. */
function cvOf(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN;
  const mean = meanOf(values);
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
  return Math.sqrt(variance) / mean;
}

const round = (v: number, digits = 0): number | null =>
  Number.isFinite(v) ? Number(v.toFixed(digits)) : null;
const mb = (bytes: number): number => Math.round(bytes / MiB);

/** The distinct states in order: the start state, then each transition's target. */
function statesVisited(run: BackpressureRun): string[] {
  return ['normal', ...run.transitions.map((t) => t.to)];
}

/**
 * The steady-state window of a full-speed phase: after the warm-up (for the
 * restored one, the time raw takes to write what the slow disk left
 * queued), and never past the moment the backlog was drained: after it the
 * pipeline reads at the producer's pace (none), which is idle, not a
 * sawtooth.
 */
function steadyWindow(run: BackpressureRun, name: PhaseName): [number, number] | null {
  const phase = run.phases.find((p) => p.name === name);
  if (phase === undefined || phase.to <= phase.from) return null;
  const from = phase.from + WARMUP_MS;
  const drained = run.samples.find((s) => s.durableRecords >= RECORDS);
  const to = Math.min(phase.to, drained?.at ?? phase.to);
  return from < to ? [from, to] : null;
}

function describePhase(run: BackpressureRun, name: PhaseName): Record<string, unknown> | null {
  const phase = run.phases.find((p) => p.name === name);
  if (phase === undefined) return null;
  const inPhase = run.samples.filter((s) => s.phase === name);
  const window = steadyWindow(run, name);
  const rates = perSecond(run.samples, phase.from, phase.to);
  const steady = window === null ? [] : perSecond(run.samples, window[0], window[1]);
  const states: string[] = [];
  for (const s of inPhase) if (states.at(-1) !== s.state) states.push(s.state);
  return {
    s: round((phase.to - phase.from) / 1000, 1),
    pauses: run.pauses.filter((at) => at >= phase.from && at < phase.to).length,
    rec_s: round(meanOf(rates)),
    steady_s: steady.length,
    steady_rec_s: round(meanOf(steady)),
    steady_cv: round(cvOf(steady), 3),
    states,
    raw_queue_fill_mean: round(meanOf(inPhase.map((s) => s.rawQueueFill)), 2),
    raw_queue_fill_max: round(Math.max(...inPhase.map((s) => s.rawQueueFill)), 2),
    source_queue_fill_mean: round(meanOf(inPhase.map((s) => s.sourceQueueFill)), 2),
    rss_mb_max: mb(Math.max(...inPhase.map((s) => s.rss))),
  };
}

/** Phase starts and state transitions, in seconds from the first durable record (the first 40). */
function timeline(run: BackpressureRun): [string, number | null][] {
  const at = (t: number) => round((t - run.startedAt) / 1000, 1);
  return [
    ...run.phases.map((p): [string, number, number | null] => [
      `phase ${p.name}`,
      p.from,
      at(p.from),
    ]),
    ...run.transitions.map((t): [string, number, number | null] => [t.to, t.at, at(t.at)]),
  ]
    .sort((a, b) => a[1] - b[1])
    .slice(0, 40)
    .map(([what, , s]) => [what, s]);
}

/** Per-second durable records over the steady seconds of every full-speed phase. */
function steadyRates(run: BackpressureRun): number[] {
  return (['full', 'restored'] as const).flatMap((name) => {
    const window = steadyWindow(run, name);
    return window === null ? [] : perSecond(run.samples, window[0], window[1]);
  });
}

let produced: number;
let runs: [BackpressureRun, BackpressureRun];
try {
  await produceBacklog(kafka, topic, RECORDS, RECORD_BYTES, PARTITIONS);
  produced = performance.now();
  runs = [
    await runBackpressure(plan('slowed', true)),
    await runBackpressure(plan('baseline', false)),
  ];
} finally {
  await deleteTopic(kafka, topic);
}
const [slowed, baseline] = runs;

const visited = statesVisited(slowed);
const steady = steadyRates(slowed);
const baseSteady = steadyRates(baseline);
const rssMax = Math.max(...slowed.samples.map((s) => s.rss));
emit({
  bench: 'backpressure',
  backlog_mb: mb(RECORDS * RECORD_BYTES),
  records: RECORDS,
  record_bytes: RECORD_BYTES,
  partitions: PARTITIONS,
  byte_budget_mb: mb(BUDGET),
  memory_limit_mb: mb(MEMORY_LIMIT),
  raw_queue_mb: mb(RAW_QUEUE),
  raw_segment_mb: mb(RAW_SEGMENT),
  source_queue_mb: mb(SOURCE_QUEUE),
  source_max_wait_ms: SOURCE_MAX_WAIT_MS,
  slow_disk_mb_s: mb(SLOW_RATE),
  hold_ms: HOLD_MS,
  recovery_dwell_ms: DWELL_MS,
  evaluate_every_ms: EVALUATE_MS,
  budget_warm_up_ms: WARMUP_MS,
  states_visited: visited,
  all_four_states: ['normal', 'degraded', 'critical', 'recovery'].every((k) => visited.includes(k)),
  ended_normal: visited.at(-1) === 'normal',
  pauses: slowed.pauses.length,
  transitions: slowed.transitions.length,
  timeline_s: timeline(slowed),
  rss_mb_start: mb(rssStart),
  rss_mb_max: mb(rssMax),
  throughput_cv: round(cvOf(steady), 3),
  steady_rec_s: round(meanOf(steady)),
  steady_s: steady.length,
  phases: {
    full: describePhase(slowed, 'full'),
    slowed: describePhase(slowed, 'slowed'),
    restored: describePhase(slowed, 'restored'),
  },
  throttled_s: round(slowed.throttledMs / 1000, 1),
  backlog_exhausted: slowed.backlogExhausted,
  baseline: {
    rec_s: round(meanOf(baseSteady)),
    throughput_cv: round(cvOf(baseSteady), 3),
    steady_s: baseSteady.length,
    states_visited: statesVisited(baseline),
    pauses: baseline.pauses.length,
    rss_mb_max: mb(Math.max(...baseline.samples.map((s) => s.rss))),
    backlog_exhausted: baseline.backlogExhausted,
  },
  produce_s: round((produced - started) / 1000, 1),
  bench_s: round((performance.now() - started) / 1000, 1),
  target_rss_mb: 512,
});
