import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { files } from '@thalweg/source-files';
import { describe, expect, it } from 'vitest';
import { parquetFiles } from '../src/index.js';
import { readAll, tempDir } from './helpers.js';

describe('parquetFiles', () => {
  it('holds the primary-raw role of a topology over a files source: every line lands in Parquet', async () => {
    const dir = await tempDir();
    const input = join(dir, 'in');
    await mkdir(input);
    const lines = Array.from({ length: 25 }, (_, n) => JSON.stringify({ n }));
    await writeFile(join(input, 'a.ndjson'), lines.join('\n') + '\n');
    let opened: RawSegmentSink | null = null;
    const part = parquetFiles({ dir: join(dir, 'raw') });
    expect(part.coverageHome).toBe(join(dir, 'raw-coverage'));
    const job = await openTopology({
      source: files({
        files: { kind: 'directory', directory: input, extension: '.ndjson' },
        format: 'ndjson',
      }),
      raw: {
        ...part,
        async open(context) {
          const raw = await part.open(context);
          if (raw.sink instanceof RawSegmentSink) opened = raw.sink;
          return raw;
        },
      },
      log: () => undefined,
    });
    const stats = await job.run();
    expect(stats.raw.durableRecords).toBe(25);
    expect(stats.rawSink?.segmentsWritten).toBeGreaterThan(0);
    // Read back from the files the topology wrote, after it closed.
    const { openParquetSink } = await import('../src/index.js');
    const sink = await openParquetSink({
      id: 'raw',
      dir: join(dir, 'raw'),
      cluster: (opened as RawSegmentSink | null)?.cluster ?? 'file-set',
      confirm: { apply: async () => undefined },
      log: () => undefined,
    });
    const [held] = await sink.held();
    expect(held).toBeDefined();
    const read = await readAll(sink, held?.partition.topic ?? '', held?.partition.partition ?? 0);
    expect(read.values).toEqual(lines);
    await sink.close();
  });
});
