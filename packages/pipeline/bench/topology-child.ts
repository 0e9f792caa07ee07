import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kafka } from 'kafkajs';
import { emit, median } from './bench-source.js';
import { bareConsumerRate, deleteTopic, produceBacklog } from './kafka-backlog.js';

/*
 * A bench's topology in a child process of its own, so that its RSS is the
 * topology's: not what producing the backlog, the bare consumer or the
 * benches run before it left on the parent's heap.
 */

/** The topic a bench file runs its topology on when started as the child, or null in the parent. */
export function childTopic(): string | null {
  return process.argv[2] === '--topology' ? (process.argv[3] ?? '') : null;
}

/**
 * The consumer group of the child's topology: one per run, so that each run
 * reads the whole backlog from its start.
 */
export function childGroup(topic: string): string {
  return `${topic}-pipeline-${process.argv[4] ?? '0'}`;
}

/** Runs the bench file at `moduleUrl` again with `--topology <topic> <run>`; its one JSON line on stdout. */
export async function inChild<T>(moduleUrl: string, topic: string, run: number): Promise<T> {
  const out: Buffer[] = [];
  const child = spawn(
    process.execPath,
    [fileURLToPath(moduleUrl), '--topology', topic, String(run)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`the topology run ended with exit code ${String(code)}`);
  return JSON.parse(Buffer.concat(out).toString()) as T;
}

/** What a bench's topology reports from its child: its rate and its RSS maximum. */
export interface TopologyRate {
  readonly recS: number;
  readonly rssMaxMb: number;
}

export interface AgainstBareConsumer<T extends TopologyRate> {
  /** The bench file's `import.meta.url`: it runs again as the child. */
  readonly moduleUrl: string;
  readonly bench: string;
  readonly kafka: Kafka;
  readonly topic: string;
  readonly records: number;
  readonly recordBytes: number;
  readonly partitions: number;
  readonly budgetBytes: number;
  /** The topology's run, in the child. */
  readonly run: () => Promise<T>;
  /** The fields of the line past those every Kafka bench prints (targets included). */
  readonly more: (result: T) => Record<string, unknown>;
}

/** Pairs of runs (bare consumer, topology) a Kafka bench makes; THALWEG_BENCH_PAIRS sets it. */
const PAIRS = Number(process.env['THALWEG_BENCH_PAIRS'] ?? 3);

/** The machine's idle and total CPU time so far (/proc/stat), or null off Linux. */
function cpuTimes(): { idle: number; total: number } | null {
  try {
    const fields = (readFileSync('/proc/stat', 'latin1').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    // idle and iowait
    return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), total };
  } catch {
    return null;
  }
}

/**
 * Waits until the machine is mostly idle (80% over half a second), at most
 * ten seconds: what a run leaves behind (a database flushing what a
 * secondary wrote, the broker cleaning up) then weighs on neither side of
 * the next pair.
 */
async function settled(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const before = cpuTimes();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = cpuTimes();
    if (before === null || after === null) return;
    const total = after.total - before.total;
    if (total > 0 && (after.idle - before.idle) / total >= 0.8) return;
  }
}

/**
 * A Kafka bench against a bare kafkajs consumer of the same topic in the
 * same run. In the child: the topology's run, its result on stdout. In the
 * parent: the backlog produced once, then PAIRS pairs of runs over all of
 * it, each with groups of its own: the bare consumer's, and the topology's
 * in a child. Each run starts once the machine has settled (`settled`), and
 * a pair's two runs are back to back, so what else the machine is doing
 * weighs on both; half the pairs run the bare consumer first and half the
 * topology, so that an order effect cancels. The line gives the median of
 * the pairs' ratios (`ratio`; each pair's in `pair_ratios`, its two rates
 * in `pair_rates_k`), the median rate of each side, and the largest RSS of
 * any topology run; the rest of it is the median-rate topology run's.
 */
export async function againstBareConsumer<T extends TopologyRate>(
  o: AgainstBareConsumer<T>,
): Promise<void> {
  if (childTopic() !== null) {
    process.stdout.write(`${JSON.stringify(await o.run())}\n`);
    return;
  }
  await produceBacklog(o.kafka, o.topic, o.records, o.recordBytes, o.partitions);
  const bares: number[] = [];
  const results: T[] = [];
  const pairRatios: number[] = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    const bare = async () => {
      await settled();
      return bareConsumerRate(o.kafka, o.topic, o.records, pair);
    };
    const topology = async () => {
      await settled();
      return inChild<T>(o.moduleUrl, o.topic, pair);
    };
    let rate: number;
    let result: T;
    if (pair % 2 === 0) {
      rate = await bare();
      result = await topology();
    } else {
      result = await topology();
      rate = await bare();
    }
    bares.push(rate);
    results.push(result);
    pairRatios.push(Number((result.recS / rate).toFixed(3)));
  }
  const mid = median(results.map((r) => r.recS));
  const result = results.find((r) => r.recS === mid) as T;
  emit({
    bench: o.bench,
    records: o.records,
    record_bytes: o.recordBytes,
    partitions: o.partitions,
    byte_budget_mb: o.budgetBytes / (1024 * 1024),
    pipeline_rec_s: Math.round(mid),
    bare_consumer_rec_s: Math.round(median(bares)),
    ratio: median(pairRatios),
    pair_ratios: pairRatios,
    // Each pair's bare and topology rates, in thousands of records per second.
    pair_rates_k: bares.map((b, i) => [
      Math.round(b / 1000),
      Math.round((results[i]?.recS ?? 0) / 1000),
    ]),
    rss_mb_max: Math.max(...results.map((r) => r.rssMaxMb)),
    ...o.more(result),
  });
  await deleteTopic(o.kafka, o.topic);
}
