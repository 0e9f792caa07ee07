import { describe, expect, it } from 'vitest';
import type { OffsetSpan } from '@thalweg/connector-core';
import type { RawSegmentSink } from '../src/index.js';
import { anchor, batchOf, openSink, readAll, recordingTarget, tempDir } from './helpers.js';
import { seeded, SimFs, type SkippedSync } from './sim-fs.js';

/**
 * Power loss, not only SIGKILL: a workload runs on a simulated disk that
 * keeps only what was fsynced (sim-fs.ts), the power goes out at its n-th
 * file-system call, and raw is reopened on what survived. The audit: open
 * succeeds, every acknowledged batch is held and reads back record for
 * record, and raw holds nothing it was not given.
 */
const BATCHES = 6;

async function workload(sink: RawSegmentSink): Promise<void> {
  for (let i = 0; i < BATCHES; i++) {
    const b = batchOf('t', i % 2, Math.floor(i / 2) * 10, Math.floor(i / 2) * 10 + 10);
    await sink.submit(b, b.span, anchor(b));
    if (i % 2 === 1) await sink.flush();
  }
  await sink.close();
}

interface Outcome {
  readonly ops: number;
  readonly crashed: boolean;
  readonly problems: string[];
}

async function crashAt(n: number, seed: number, skip: SkippedSync): Promise<Outcome> {
  const dir = await tempDir();
  const fs = new SimFs(n, skip);
  const confirm = recordingTarget();
  const acked: OffsetSpan[] = [];
  const problems: string[] = [];
  try {
    const sink = await openSink(dir, {
      fs,
      confirm: {
        apply: async (c, receipt) => {
          acked.push(receipt.span);
          await confirm.apply(c, receipt);
        },
      },
      retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    await workload(sink).catch(async () => sink.close().catch(() => undefined));
  } catch {
    // The power went out during open: nothing was acknowledged.
  }
  const after = fs.afterCrash(seeded(seed * 7919 + n));
  let reopened: RawSegmentSink;
  try {
    reopened = await openSink(dir, { fs: after });
  } catch (error) {
    return { ops: fs.ops, crashed: fs.crashed, problems: [`open failed: ${String(error)}`] };
  }
  try {
    for (const span of acked) {
      const held = reopened
        .durableSpans(span)
        .some((s) => s.start <= span.start && s.end >= span.end);
      if (!held) problems.push(`acknowledged ${span.topic}/${span.partition}@${span.start} lost`);
    }
    for (const partition of [0, 1]) {
      const { records } = await readAll(reopened, 't', partition);
      const expected = records.map(
        (r) => batchOf('t', partition, r.offset, r.offset + 1).records[0],
      );
      records.forEach((r, i) => {
        if (!Buffer.from(r.value).equals(Buffer.from(expected[i]!.value))) {
          problems.push(`t/${partition}@${r.offset} reads back changed`);
        }
      });
      for (const s of reopened.durableSpans({ topic: 't', partition })) {
        if (s.end > 30) problems.push(`t/${partition} over-claims [${s.start}, ${s.end})`);
      }
    }
  } catch (error) {
    problems.push(`read failed: ${String(error)}`);
  } finally {
    await reopened.close().catch(() => undefined);
  }
  return { ops: fs.ops, crashed: fs.crashed, problems };
}

/** Every crash point of the workload, for `seeds` different survivals of unsynced state. */
async function sweep(
  skip: SkippedSync,
  seeds: number,
): Promise<{ points: number; failures: string[] }> {
  const total = (await crashAt(Number.POSITIVE_INFINITY, 0, skip)).ops;
  let points = 0;
  const failures: string[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    for (let n = 1; n <= total + 1; n++) {
      const outcome = await crashAt(n, seed, skip);
      points++;
      for (const p of outcome.problems) failures.push(`crash at call ${n}, seed ${seed}: ${p}`);
    }
  }
  return { points, failures };
}

describe('raw survives a power loss at any point', () => {
  it('loses nothing acknowledged and over-claims nothing, at 200+ crash points', async () => {
    const { points, failures } = await sweep(null, 4);
    // 57 file-system calls in the workload: 58 crash points, each with 4 survivals of unsynced state.
    expect(points).toBeGreaterThanOrEqual(200);
    expect(failures).toEqual([]);
  }, 120_000);

  it.each(['segment-sync', 'dir-sync', 'manifest-sync'] as const)(
    'needs the %s: without it some crash point loses an acknowledged batch (raw refuses to open over it)',
    async (skip) => {
      const { failures } = await sweep(skip, 2);
      expect(failures.length).toBeGreaterThan(0);
    },
    120_000,
  );
});
