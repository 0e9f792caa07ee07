import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MEMORY_LIMIT_BYTES } from '@thalweg/connector-core';
import { rawSegments, RawSegmentSink } from '../src/index.js';
import { anchor, batchOf, ID, recordingTarget, tempDir } from './helpers.js';

const log = { info: (): void => undefined, debug: (): void => undefined };
const clock = { now: () => 0 };
const MiB = 1024 * 1024;

describe('rawSegments', () => {
  it("keeps coverage next to raw by default, or where it is told; raw's id defaults in the topology", () => {
    expect(rawSegments({ dir: '/data/raw/' }).coverageHome).toBe('/data/raw-coverage');
    expect(rawSegments({ dir: '/data/raw', coverageDir: '/data/cov' }).coverageHome).toBe(
      '/data/cov',
    );
    expect(rawSegments({ dir: '/data/raw' }).id).toBeUndefined();
    expect(rawSegments({ id: 'landing', dir: '/data/raw' }).id).toBe('landing');
  });

  it("opens the sink with the context's id, cluster and confirm target, its settings at debug", async () => {
    const dir = join(await tempDir(), 'raw');
    const debug: string[] = [];
    const target = recordingTarget();
    const opened = await rawSegments({ dir, writer: 'inline' }).open({
      id: ID,
      cluster: 'from-the-source',
      confirm: target,
      clock,
      memoryLimitBytes: DEFAULT_MEMORY_LIMIT_BYTES,
      log: { ...log, debug: (line) => debug.push(line) },
    });
    if (!(opened.sink instanceof RawSegmentSink)) throw new Error('not a RawSegmentSink');
    expect(opened.sink.cluster).toBe('from-the-source');
    const batch = batchOf('t', 0, 0, 3);
    await opened.sink.submit(batch, batch.span, anchor(batch));
    await opened.sink.flush();
    expect(target.applied).toHaveLength(1);
    expect(opened.stats().segmentsWritten).toBe(1);
    expect(debug.some((l) => l.startsWith('thalweg sink-files raw: dir='))).toBe(true);
    await opened.sink.close();
  });

  it("bounds its queue by an eighth of the topology's memory limit, at most 128 MiB, unless given one", async () => {
    const queued = async (memoryLimitBytes: number, maxQueuedBytes?: number) => {
      const debug: string[] = [];
      const dir = join(await tempDir(), 'raw');
      const opened = await rawSegments({
        dir,
        writer: 'inline',
        ...(maxQueuedBytes === undefined ? {} : { maxQueuedBytes }),
      }).open({
        id: ID,
        cluster: 'c',
        confirm: recordingTarget(),
        clock,
        memoryLimitBytes,
        log: { ...log, debug: (line) => debug.push(line) },
      });
      await opened.sink.close();
      return debug.find((l) => l.includes('maxQueuedBytes='))?.replace(/.*maxQueuedBytes=/, '');
    };
    expect(await queued(DEFAULT_MEMORY_LIMIT_BYTES)).toBe(String(128 * MiB));
    expect(await queued(512 * MiB)).toBe(String(64 * MiB));
    expect(await queued(64 * MiB)).toBe(String(8 * MiB));
    expect(await queued(512 * MiB, 3 * MiB)).toBe(String(3 * MiB));
  });
});
