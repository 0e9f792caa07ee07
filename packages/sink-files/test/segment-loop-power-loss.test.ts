import { describe, expect, it } from 'vitest';
import type { OffsetSpan, SourceBatch } from '@thalweg/connector-core';
import { PowerLossFs, type PowerLossOptions } from './doubles/power-loss-fs.js';
import { startLoop } from './loop-harness.js';
import { sweep, type Run } from './power-loss-audit.js';

/**
 * The loop on the power-loss file system, cut at `options.crashAtOp`;
 * acknowledged: what it reported durable. With `sliceBytes`, the encode
 * pauses (and writes its temp file) after every slice of that many bytes.
 */
const loopUntilCrash =
  (sliceBytes?: number) =>
  async (dir: string, batches: readonly SourceBatch[], options: PowerLossOptions): Promise<Run> => {
    const fs = new PowerLossFs(options);
    let acknowledged: readonly OffsetSpan[] = [];
    try {
      const loop = await startLoop(fs, dir, batches, {
        ...(sliceBytes === undefined ? {} : { sliceBytes }),
      });
      await loop.done.catch(() => undefined);
      acknowledged = loop.durable();
    } catch {
      // The power went while the directory was being set up: nothing was acknowledged.
    }
    return { image: fs.crash(), acknowledged, operations: fs.operations };
  };

describe('the writer thread loop under power loss', () => {
  it.each(['synced-only', 'any-subset', 'torn-sectors'] as const)(
    'loses nothing it reported durable and invents nothing, at every crash point (%s)',
    async (survival) => {
      const { points, failing } = await sweep(loopUntilCrash(), survival);
      expect(points).toBeGreaterThanOrEqual(150);
      expect(failing).toEqual([]);
    },
  );

  it.each(['synced-only', 'any-subset', 'torn-sectors'] as const)(
    'with each segment written to its temp file in slices as it is encoded (%s)',
    async (survival) => {
      const { points, failing } = await sweep(loopUntilCrash(2048), survival);
      // The sweep above has about 170 crash points: the slices' writes add more.
      expect(points).toBeGreaterThanOrEqual(180);
      expect(failing).toEqual([]);
    },
  );
});
