import { describe, expect, it } from 'vitest';
import type { SourceBatch } from '@thalweg/connector-core';
import type { RawSegmentSink } from '../src/index.js';
import { anchor, openSink, recordingTarget } from './helpers.js';
import { PowerLossFs, type PowerLossOptions } from './doubles/power-loss-fs.js';
import { sweep, type Run } from './power-loss-audit.js';

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

describe('RawSegmentSink under power loss', () => {
  it('loses nothing it acknowledged and invents nothing, at every crash point (synced state only)', async () => {
    const { points, failing } = await sweep(runUntilCrash, 'synced-only');
    expect(points).toBeGreaterThanOrEqual(150);
    expect(failing).toEqual([]);
  });

  it('the same when any unsynced writes and entries survive, out of order and torn', async () => {
    const { points, failing } = await sweep(runUntilCrash, 'any-subset');
    expect(points).toBeGreaterThanOrEqual(150);
    expect(failing).toEqual([]);
  });

  it('the same when unsynced writes reach the disk sector by sector, a torn append ending in its newline', async () => {
    const { points, failing } = await sweep(runUntilCrash, 'torn-sectors');
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
      const { failing } = await sweep(runUntilCrash, 'synced-only', skip);
      expect(failing.length).toBeGreaterThan(0);
    },
  );
});
