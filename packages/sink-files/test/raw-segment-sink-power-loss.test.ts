import { describe, expect, it } from 'vitest';
import { partitionKey, type OffsetSpan, type SourceBatch } from '@thalweg/connector-core';
import type { RawSegmentSink } from '../src/index.js';
import { anchor, batchOf, openSink, plain, readAll, recordingTarget, tempDir } from './helpers.js';
import {
  PowerLossFs,
  type DiskImage,
  type PowerLossOptions,
  type Survival,
} from './doubles/power-loss-fs.js';

const PARTITIONS = 3;

/** A deterministic workload: batches of 1..12 records, round-robin over three partitions. */
function workload(batches: number): SourceBatch[] {
  const next = Array.from({ length: PARTITIONS }, () => 0);
  return Array.from({ length: batches }, (_, i) => {
    const partition = i % PARTITIONS;
    const start = next[partition]!;
    const end = start + 1 + ((i * 7) % 12);
    next[partition] = end;
    return batchOf('t', partition, start, end);
  });
}

interface Run {
  readonly image: DiskImage;
  readonly acknowledged: readonly OffsetSpan[];
  readonly operations: number;
}

/** Writes the workload until the power goes (or to the end), and returns what survived. */
async function runUntilCrash(
  dir: string,
  batches: readonly SourceBatch[],
  options: PowerLossOptions,
): Promise<Run> {
  const fs = new PowerLossFs(options);
  const target = recordingTarget();
  let sink: RawSegmentSink | null = null;
  try {
    sink = await openSink(dir, {
      fs,
      confirm: target,
      maxBatchesPerSegment: 3,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      onError: () => undefined,
    });
    for (const b of batches) {
      if (fs.crashed) break;
      await sink.submit(b, b.span, anchor(b));
    }
    await sink.flush();
  } catch {
    // The power went (in open, or under the writes): the sink fails, as a
    // real one would on EIO.
  }
  await sink?.close().catch(() => undefined);
  const operations = fs.operations;
  return { image: fs.crash(), acknowledged: target.applied.map((a) => a.receipt.span), operations };
}

/**
 * Reopens raw on what survived and lists what is wrong: an acknowledged
 * record missing or changed (loss), a record that was never written
 * (over-claim), or an open that refuses.
 */
async function audit(dir: string, run: Run, batches: readonly SourceBatch[]): Promise<string[]> {
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

async function sweep(
  survival: Survival,
  skip: NonNullable<PowerLossOptions['skip']> = {},
): Promise<{ points: number; failing: string[] }> {
  const batches = workload(60);
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

describe('RawSegmentSink under power loss', () => {
  it('loses nothing it acknowledged and invents nothing, at every crash point (synced state only)', async () => {
    const { points, failing } = await sweep('synced-only');
    expect(points).toBeGreaterThanOrEqual(150);
    expect(failing).toEqual([]);
  });

  it('the same when any unsynced writes and entries survive, out of order and torn', async () => {
    const { points, failing } = await sweep('any-subset');
    expect(points).toBeGreaterThanOrEqual(150);
    expect(failing).toEqual([]);
  });

  it('the same when unsynced writes reach the disk sector by sector, a torn append ending in its newline', async () => {
    const { points, failing } = await sweep('torn-sectors');
    expect(points).toBeGreaterThanOrEqual(150);
    expect(failing).toEqual([]);
  });

  const needed: [string, NonNullable<PowerLossOptions['skip']>][] = [
    ["the segment's fsync", { sync: (name) => name.includes('seg-') }],
    ["the manifest's fsync", { sync: (name) => name.includes('raw.manifest') }],
    ["the directory's fsync", { syncDir: true }],
  ];
  it.each(needed)(
    '%s is needed: without it some crash point loses an acknowledged record',
    async (_, skip) => {
      const { failing } = await sweep('synced-only', skip);
      expect(failing.length).toBeGreaterThan(0);
    },
  );
});
