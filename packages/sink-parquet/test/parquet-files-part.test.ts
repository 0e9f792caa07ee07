import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { files } from '@thalweg/source-files';
import { describe, expect, it } from 'vitest';
import { openParquetSink, parquetFiles } from '../src/index.js';
import { ID, quiet, readAll, tempDir } from './helpers.js';

describe('parquetFiles', () => {
  it('holds the primary-raw role of a topology over a files source: every line lands in Parquet', async () => {
    const dir = await tempDir();
    const input = join(dir, 'in');
    await mkdir(input);
    const lines = Array.from({ length: 25 }, (_, n) => JSON.stringify({ n }));
    await writeFile(join(input, 'a.ndjson'), lines.join('\n') + '\n');
    const raw = parquetFiles({ dir: join(dir, 'raw') });
    expect(raw.coverageHome).toBe(join(dir, 'raw-coverage'));
    const job = await openTopology({
      source: files({
        files: { kind: 'directory', directory: input, extension: '.ndjson' },
        format: 'ndjson',
        cluster: 'landing',
      }),
      raw,
      log: quiet,
    });
    const stats = await job.run();
    expect(stats.raw.durableRecords).toBe(25);
    expect(stats.rawSink?.segmentsWritten).toBeGreaterThan(0);

    // What the topology made durable, read back from its Parquet files after it closed.
    const sink = await openParquetSink({
      id: ID,
      dir: join(dir, 'raw'),
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
