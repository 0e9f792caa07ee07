import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rawSegments, RawSegmentSink } from '../src/index.js';
import { anchor, batchOf, ID, recordingTarget, tempDir } from './helpers.js';

const log = { info: (): void => undefined, debug: (): void => undefined };
const clock = { now: () => 0 };

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
});
