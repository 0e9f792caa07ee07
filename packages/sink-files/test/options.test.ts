import { ConfigError, sinkId } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { nodeSegmentFs, RawSegmentSink, type RawSegmentSinkOptions } from '../src/index.js';
import { CLUSTER, quiet, recordingTarget, tempDir } from './helpers.js';

async function refusal(options: Record<string, unknown>): Promise<ConfigError> {
  const base = {
    id: sinkId('raw'),
    dir: await tempDir(),
    cluster: CLUSTER,
    confirm: recordingTarget(),
    log: quiet,
  };
  const input: RawSegmentSinkOptions = { ...base, ...options };
  const error = await RawSegmentSink.open(input).then(
    () => null,
    (e: unknown) => e,
  );
  if (error instanceof ConfigError) return error;
  throw new Error(`expected a ConfigError, got ${String(error)}`);
}

describe('RawSegmentSink options', () => {
  it.each([
    [{ id: 'Not An Id' }, 'rawSegments.id'],
    [{ dir: '' }, 'rawSegments.dir'],
    [{ cluster: '' }, 'rawSegments.cluster'],
    [{ cluster: 'lone\ud800' }, 'rawSegments.cluster'],
    [{ confirm: {} }, 'rawSegments.confirm'],
    [{ maxSegmentBytes: 10 }, 'rawSegments.maxSegmentBytes'],
    [{ maxBatchesPerSegment: 0 }, 'rawSegments.maxBatchesPerSegment'],
    [{ maxQueuedBatches: 1.5 }, 'rawSegments.maxQueuedBatches'],
    [{ maxQueuedBytes: '1' }, 'rawSegments.maxQueuedBytes'],
    [{ readChunkRecords: -1 }, 'rawSegments.readChunkRecords'],
    [{ retry: { maxAttempts: 0 } }, 'rawSegments.retry.maxAttempts'],
    [{ retry: { tries: 3 } }, 'rawSegments.retry.tries'],
    [{ fs: { list: () => [] }, writer: 'inline' }, 'rawSegments.fs.ensureDir'],
    [{ writer: 'threads' }, 'rawSegments.writer'],
    [{ fs: { ...nodeSegmentFs } }, 'rawSegments.fs'],
    [{ fs: { ...nodeSegmentFs }, writer: 'worker' }, 'rawSegments.fs'],
    [{ onError: 'log it' }, 'rawSegments.onError'],
    [{ waitPerBatch: true }, 'rawSegments.waitPerBatch'],
  ])('refuses %j naming %s', async (options, path) => {
    const error = await refusal(options);
    expect(error.code).toBe('TWG_CONFIG_INVALID');
    expect(error.path).toBe(path);
    expect(error.message).toContain(path);
  });

  it('logs every setting at open, defaults included', async () => {
    const lines: string[] = [];
    const sink = await RawSegmentSink.open({
      id: sinkId('raw'),
      dir: await tempDir(),
      cluster: CLUSTER,
      confirm: recordingTarget(),
      log: (line) => lines.push(line),
    });
    expect(lines).toContain('thalweg sink-files raw: maxSegmentBytes=67108864');
    expect(lines).toContain('thalweg sink-files raw: retry.maxAttempts=5');
    expect(lines).toContain('thalweg sink-files raw: fs=node');
    expect(lines).toContain('thalweg sink-files raw: writer=worker');
    await sink.close();
  });
});
