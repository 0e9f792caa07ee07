import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Kafka } from 'kafkajs';
import { emit } from './bench-source.js';
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

/** Runs the bench file at `moduleUrl` again with `--topology <topic>`; its one JSON line on stdout. */
export async function inChild<T>(moduleUrl: string, topic: string): Promise<T> {
  const out: Buffer[] = [];
  const run = spawn(process.execPath, [fileURLToPath(moduleUrl), '--topology', topic], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  run.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    run.on('error', reject);
    run.on('exit', resolve);
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

/**
 * A Kafka bench against a bare kafkajs consumer of the same topic in the
 * same run. In the child: the topology's run, its result on stdout. In the
 * parent: the backlog produced, the bare consumer's rate, the topology run
 * in a child, one line, and the topic deleted.
 */
export async function againstBareConsumer<T extends TopologyRate>(
  o: AgainstBareConsumer<T>,
): Promise<void> {
  if (childTopic() !== null) {
    process.stdout.write(`${JSON.stringify(await o.run())}\n`);
    return;
  }
  await produceBacklog(o.kafka, o.topic, o.records, o.recordBytes, o.partitions);
  const bare = await bareConsumerRate(o.kafka, o.topic, o.records);
  const result = await inChild<T>(o.moduleUrl, o.topic);
  emit({
    bench: o.bench,
    records: o.records,
    record_bytes: o.recordBytes,
    partitions: o.partitions,
    byte_budget_mb: o.budgetBytes / (1024 * 1024),
    pipeline_rec_s: Math.round(result.recS),
    bare_consumer_rec_s: Math.round(bare),
    ratio: Number((result.recS / bare).toFixed(3)),
    rss_mb_max: result.rssMaxMb,
    ...o.more(result),
  });
  await deleteTopic(o.kafka, o.topic);
}
