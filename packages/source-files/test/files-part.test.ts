import { recordingPartContext } from '@thalweg/contracts';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError } from '@thalweg/connector-core';
import { files, FileSetSource } from '../src/index.js';
import { collect, offsets, tempDir, values, writeFiles } from './helpers.js';

describe('files(): the source part', () => {
  it('opens a source over the set that reads its NDJSON records, the settings logged at debug', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['{"a":1}\n{"a":2}\n', '{"a":3}\n']);
    const { context: ctx, info, debug } = recordingPartContext();
    const part = files({
      files: { kind: 'directory', directory: dir, extension: '.ndjson' },
      format: 'ndjson',
      topic: 'events',
      cluster: 'landing',
      maxBatchRecords: 2,
    });
    expect(part.role).toBe('source');
    const source = await part.open(ctx);
    onTestFinished(() => source.close());
    expect(source).toBeInstanceOf(FileSetSource);
    expect(source.cluster).toBe('landing');
    expect(source.partitions()).toEqual([{ topic: 'events', partition: 0 }]);
    const batches = await collect(source);
    expect(values(batches)).toEqual(['{"a":1}', '{"a":2}', '{"a":3}']);
    expect(offsets(batches)).toEqual([0, 1, 2]);
    expect(debug).toHaveLength(1);
    expect(debug[0]).toContain('thalweg source-files: format=ndjson cluster=landing topic=events');
    expect(debug[0]).toContain('files=2');
    expect(debug[0]).toContain('maxBatchRecords=2');
    expect(info).toEqual([]);
  });

  it('uses the default cluster when none is given', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['x\n']);
    const source = await files({
      files: { kind: 'directory', directory: dir, extension: '.ndjson' },
      format: 'ndjson',
    }).open(recordingPartContext().context);
    onTestFinished(() => source.close());
    expect(source.cluster).toBe('file-set');
  });

  it('validates at declaration, naming the field', () => {
    expect(() =>
      files({
        files: { kind: 'paths', paths: ['/nowhere/a.ndjson'] },
        format: 'ndjson',
        maxBatchBytes: 0,
      }),
    ).toThrow(ConfigError);
    expect(() =>
      files({ files: { kind: 'paths', paths: ['/nowhere/a.ndjson'] }, format: 'ndjson' }),
    ).toThrow(/fileSource\.topic/);
  });
});
