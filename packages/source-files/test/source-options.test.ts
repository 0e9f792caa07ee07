import { ConfigError } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { FileSetSource, type FileSetSourceOptions } from '../src/index.js';
import { rejection, tempDir } from './helpers.js';

async function pathOf(options: FileSetSourceOptions): Promise<string> {
  const error = await rejection(() => FileSetSource.open(options));
  if (!(error instanceof ConfigError)) throw error;
  return error.path;
}

describe('options are validated at the edge, naming the option', () => {
  it('refuses each bad option by its path', async () => {
    const dir = await tempDir();
    const files = { kind: 'directory', directory: dir, extension: '.ndjson' } as const;
    expect(await pathOf({ files, format: 'ndjson', maxBatchRecords: 0 })).toBe(
      'fileSource.maxBatchRecords',
    );
    expect(await pathOf({ files, format: 'ndjson', maxBatchBytes: 1.5 })).toBe(
      'fileSource.maxBatchBytes',
    );
    expect(await pathOf({ files, format: 'ndjson', maxRecordBytes: -1 })).toBe(
      'fileSource.maxRecordBytes',
    );
    expect(
      await pathOf({ files, format: 'ndjson', readChunkBytes: 1024, maxBufferBytes: 512 }),
    ).toBe('fileSource.maxBufferBytes');
    expect(await pathOf({ files, format: 'ndjson', topic: '' })).toBe('fileSource.topic');
    expect(await pathOf({ files, format: 'ndjson', cluster: '' })).toBe('fileSource.cluster');
    expect(await pathOf({ files, format: 'arrow-ipc', timestampColumn: '' })).toBe(
      'fileSource.timestampColumn',
    );
    expect(await pathOf({ files, format: 'csv' } as unknown as FileSetSourceOptions)).toBe(
      'fileSource.format',
    );
    expect(await pathOf({ files: { ...files, extension: '' }, format: 'ndjson' })).toBe(
      'fileSource.files.extension',
    );
    expect(
      await pathOf({ files: { kind: 'paths', paths: ['a', ''] }, format: 'ndjson', topic: 't' }),
    ).toBe('fileSource.files.paths[1]');
    expect(await pathOf({ files: { kind: 'paths', paths: ['a'] }, format: 'ndjson' })).toBe(
      'fileSource.topic',
    );
    expect(
      await pathOf({
        files: { kind: 'glob', pattern: '*' },
        format: 'ndjson',
      } as unknown as FileSetSourceOptions),
    ).toBe('fileSource.files.kind');
  });

  it('refuses an unknown option, naming it', async () => {
    const dir = await tempDir();
    const files = { kind: 'directory', directory: dir, extension: '.ndjson' } as const;
    const error = await rejection(() =>
      FileSetSource.open({ files, format: 'ndjson', maxBatchRecs: 10 } as FileSetSourceOptions),
    );
    if (!(error instanceof ConfigError)) throw error;
    expect(error.path).toBe('fileSource.maxBatchRecs');
    expect(error.message).toMatch(/fileSource\.maxBatchRecs: .*unknown key/);
    // Inside the file set too.
    expect(
      await pathOf({
        files: { ...files, recursive: true },
        format: 'ndjson',
      } as unknown as FileSetSourceOptions),
    ).toBe('fileSource.files.recursive');
  });

  it('refuses a path listed twice and a path that is a directory', async () => {
    const dir = await tempDir();
    expect(
      await pathOf({ files: { kind: 'paths', paths: [dir, dir] }, format: 'ndjson', topic: 't' }),
    ).toBe('fileSource.files.paths[1]');
    expect(
      await pathOf({ files: { kind: 'paths', paths: [dir] }, format: 'ndjson', topic: 't' }),
    ).toBe('fileSource.files.paths[0]');
  });

  it('types: timestampColumn is an arrow-ipc option only', () => {
    const files = { kind: 'paths', paths: ['x'] } as const;
    const ok: FileSetSourceOptions = {
      files,
      format: 'arrow-ipc',
      topic: 't',
      timestampColumn: 'at',
    };
    const bad: FileSetSourceOptions = {
      files,
      format: 'ndjson',
      topic: 't',
      // @ts-expect-error an NDJSON line has no columns: the record time is the file's
      timestampColumn: 'at',
    };
    const mixed: FileSetSourceOptions = {
      // @ts-expect-error a directory set is filtered by extension, not given paths
      files: { kind: 'directory', paths: ['x'] },
      format: 'ndjson',
    };
    expect([ok, bad, mixed]).toHaveLength(3);
  });
});
