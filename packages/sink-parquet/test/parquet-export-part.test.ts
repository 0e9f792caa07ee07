import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { files } from '@thalweg/source-files';
import { describe, expect, it } from 'vitest';
import { openParquetSink, parquetExport } from '../src/index.js';
import { ID, quiet, readAll, tempDir } from './helpers.js';

describe('parquetExport', () => {
  it('is a secondary of a topology: every raw record lands in its Parquet files', async () => {
    const dir = await tempDir();
    const input = join(dir, 'in');
    await mkdir(input);
    const lines = Array.from({ length: 30 }, (_, n) => JSON.stringify({ n }));
    await writeFile(join(input, 'a.ndjson'), lines.join('\n') + '\n');
    const job = await openTopology({
      source: files({
        files: { kind: 'directory', directory: input, extension: '.ndjson' },
        format: 'ndjson',
        cluster: 'landing',
      }),
      raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
      secondaries: { export: parquetExport({ dir: join(dir, 'export') }) },
      log: quiet,
    });
    const stats = await job.run();
    expect(stats.raw.durableRecords).toBe(30);
    expect(stats.sinks.export?.recordsWritten).toBe(30);
    // Confirmed through the secondary lane: its coverage, not raw's anchor.
    expect(stats.secondaries.find((s) => s.sink === 'export')).toMatchObject({
      deliveredRecords: 30,
      shedRecords: 0,
    });

    const sink = await openParquetSink({
      id: ID,
      dir: join(dir, 'export'),
      cluster: 'landing',
      confirm: { apply: async () => undefined },
      log: quiet,
    });
    const held = await sink.held();
    expect(held).toHaveLength(1);
    const { topic, partition } = held[0]?.partition ?? { topic: '', partition: 0 };
    expect((await readAll(sink, topic, partition)).values).toEqual(lines);
    await sink.close();
  });
});
