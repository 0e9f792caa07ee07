import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKER_RESOURCE_LIMITS } from '@thalweg/connector-core';
import { startSegmentWorker } from '../src/segment-worker-entry.js';
import { WORKER_PROTOCOL } from '../src/worker-protocol.js';

describe('startSegmentWorker', () => {
  it("starts the writer thread with thalweg's bound on its young generation", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-entry-'));
    try {
      const worker = await startSegmentWorker({
        protocol: WORKER_PROTOCOL,
        dir,
        cluster: 'c',
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        maxSegmentBytes: 1 << 20,
        maxBatchesPerSegment: 16,
        nextSequence: 0,
        checksums: true,
      });
      expect(worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(
        WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb,
      );
      await worker.terminate();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
