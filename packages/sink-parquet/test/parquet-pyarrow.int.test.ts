import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { anchor, batchOf, openSink, tempDir } from './helpers.js';

const run = promisify(execFile);

describe('a written Parquet file, read by pyarrow', () => {
  it('has every row, zstd column chunks, and the raw envelope columns', async () => {
    const python = process.env['THALWEG_FLIGHT_PYTHON'];
    if (python === undefined)
      throw new Error('THALWEG_FLIGHT_PYTHON is not set: source /tmp/svc.env');
    const dir = await tempDir();
    const sink = await openSink(dir);
    const b = batchOf('t', 0, 0, 1000);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    await sink.close();
    const [file] = (await readdir(dir)).filter((n) => n.endsWith('.parquet'));
    const script = [
      'import sys, pyarrow.parquet as pq',
      'f = pq.ParquetFile(sys.argv[1])',
      'rg = f.metadata.row_group(0)',
      'print(f.metadata.num_rows, {rg.column(i).compression for i in range(rg.num_columns)}, ",".join(f.schema_arrow.names))',
      'print(pq.read_table(sys.argv[1]).column("value")[999].as_py().decode())',
    ].join('\n');
    const { stdout } = await run(python, ['-c', script, join(dir, file ?? '')]);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe("1000 {'ZSTD'} offset,timestamp,key,value,headers");
    expect(lines[1]).toBe('value-999');
  });
});
