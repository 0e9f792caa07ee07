import { partitionKey, type OffsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { batchOf, openSink, plain, readAll, tempDir } from './helpers.js';
import {
  PowerLossFs,
  type DiskImage,
  type PowerLossOptions,
  type Survival,
} from './doubles/power-loss-fs.js';

export const PARTITIONS = 3;

/** A deterministic workload: batches of 1..12 records, round-robin over three partitions. */
export function workload(batches: number): SourceBatch[] {
  const next = Array.from({ length: PARTITIONS }, () => 0);
  return Array.from({ length: batches }, (_, i) => {
    const partition = i % PARTITIONS;
    const start = next[partition]!;
    const end = start + 1 + ((i * 7) % 12);
    next[partition] = end;
    return batchOf('t', partition, start, end);
  });
}

export interface Run {
  readonly image: DiskImage;
  readonly acknowledged: readonly OffsetSpan[];
  readonly operations: number;
}

/**
 * Reopens raw on what survived and lists what is wrong: an acknowledged
 * record missing or changed (loss), a record that was never written
 * (over-claim), or an open that refuses.
 */
export async function audit(
  dir: string,
  run: Run,
  batches: readonly SourceBatch[],
): Promise<string[]> {
  const problems: string[] = [];
  const written = new Map<string, Map<number, unknown>>();
  for (const b of batches) {
    const key = partitionKey(b.span);
    const offsets = written.get(key) ?? new Map<number, unknown>();
    plain(b.records).forEach((r, i) => offsets.set(b.span.start + i, r));
    written.set(key, offsets);
  }
  let sink;
  try {
    sink = await openSink(dir, { fs: new PowerLossFs({}, run.image) });
  } catch (e) {
    return [`open refused: ${e instanceof Error ? e.message : String(e)}`];
  }
  try {
    const held = new Map<string, Map<number, unknown>>();
    for (let p = 0; p < PARTITIONS; p++) {
      const { records } = await readAll(sink, 't', p);
      const expected = written.get(partitionKey({ topic: 't', partition: p }))!;
      const got = new Map<number, unknown>();
      plain(records).forEach((r, i) => got.set(records[i]!.offset, r));
      for (const [offset, r] of got) {
        if (JSON.stringify(r) !== JSON.stringify(expected.get(offset))) {
          problems.push(`t/${p}@${offset} reads back as something never written`);
        }
      }
      held.set(partitionKey({ topic: 't', partition: p }), got);
    }
    for (const span of run.acknowledged) {
      const got = held.get(partitionKey(span))!;
      for (let o = span.start; o < span.end; o++) {
        if (!got.has(o)) problems.push(`acknowledged t/${span.partition}@${o} is missing`);
      }
    }
  } finally {
    await sink.close();
  }
  return problems;
}

/** A writer run on the power-loss file system until it crashes at `options.crashAtOp`. */
export type CrashRun = (
  dir: string,
  batches: readonly SourceBatch[],
  options: PowerLossOptions,
) => Promise<Run>;

/**
 * Runs the workload (by default the 60-batch one) once to count its crash
 * points, then once per point with the power cut there, and audits what
 * each crash left.
 */
export async function sweep(
  runUntilCrash: CrashRun,
  survival: Survival,
  skip: NonNullable<PowerLossOptions['skip']> = {},
  batches: readonly SourceBatch[] = workload(60),
): Promise<{ points: number; failing: string[] }> {
  const full = await runUntilCrash(await tempDir(), batches, { skip });
  const failing: string[] = [];
  for (let at = 1; at <= full.operations; at++) {
    const dir = await tempDir();
    const run = await runUntilCrash(dir, batches, { crashAtOp: at, survival, seed: at, skip });
    const problems = await audit(dir, run, batches);
    if (problems.length > 0) failing.push(`crash at op ${at}: ${problems[0]}`);
  }
  return { points: full.operations, failing };
}
