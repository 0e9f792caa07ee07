import { writeFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { headerValue } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { FILE_HEADER, FileSetSource, FileSourceError } from '../src/index.js';
import {
  checkSpans,
  collect,
  ndjsonOptions,
  offsets,
  openSource,
  rejection,
  tempDir,
  values,
  writeFiles,
} from './helpers.js';

describe('FileSetSource over NDJSON', () => {
  it('reads three files (empty, CRLF, unterminated last line) with contiguous offsets and file headers', async () => {
    const dir = await tempDir();
    const contents = ['{"a":1}\n{"a":2}\r\n\n{"a":3}\n', '', '{"b":1}\r\n\r\n  \n{"b":2}'];
    const names = await writeFiles(dir, contents);
    const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 2 }));
    const batches = await collect(source);
    expect(values(batches)).toEqual(['{"a":1}', '{"a":2}', '{"a":3}', '{"b":1}', '  ', '{"b":2}']);
    expect(offsets(batches)).toEqual([0, 1, 2, 3, 4, 5]);
    checkSpans(batches);
    expect(batches.map((b) => b.records.length)).toEqual([2, 2, 2]);
    const files = batches.flatMap((b) =>
      b.records.map((r) => Buffer.from(headerValue(r.headers, FILE_HEADER)!).toString()),
    );
    expect(files).toEqual([names[0], names[0], names[0], names[2], names[2], names[2]]);
    for (const r of batches.flatMap((b) => b.records)) {
      expect(r.key).toBeNull();
      expect(Number.isInteger(r.timestamp)).toBe(true);
    }
    expect(source.stats()).toMatchObject({ files: 3, filesDone: 3, records: 6, batches: 3 });
    expect(source.stats().bytesRead).toBe(contents.join('').length);
  });

  it('keeps a lone trailing \\r of an unterminated last line, and reads bytes undecoded', async () => {
    const dir = await tempDir();
    const raw = Buffer.from([0xff, 0xfe, 0x0a, 0x61, 0x0d]);
    await writeFiles(dir, [raw]);
    const batches = await collect(await openSource(ndjsonOptions(dir)));
    expect(batches.flatMap((b) => b.records.map((r) => Buffer.from(r.value)))).toEqual([
      Buffer.from([0xff, 0xfe]),
      Buffer.from([0x61, 0x0d]),
    ]);
  });

  it('uses the file modification time as the record timestamp', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['x\n']);
    await utimes(join(dir, 'f000.ndjson'), 1_700_000_000, 1_700_000_000.5);
    const [batch] = await collect(await openSource(ndjsonOptions(dir)));
    expect(batch!.records[0]!.timestamp).toBe(1_700_000_000_500);
  });

  it('sorts a directory by name in code-unit order, skipping dot-files and other extensions', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'b.ndjson'), 'b\n');
    await writeFile(join(dir, 'B.ndjson'), 'B\n');
    await writeFile(join(dir, 'a.ndjson'), 'a\n');
    await writeFile(join(dir, '.c.ndjson'), 'hidden\n');
    await writeFile(join(dir, 'd.json'), 'other\n');
    const source = await openSource(ndjsonOptions(dir));
    expect(source.fileNames).toEqual(['B.ndjson', 'a.ndjson', 'b.ndjson']);
    expect(values(await collect(source))).toEqual(['B', 'a', 'b']);
    expect(source.partitions()).toEqual([{ topic: dir.split('/').pop(), partition: 0 }]);
  });

  it('reads a list of paths in the order given', async () => {
    const dir = await tempDir();
    const names = await writeFiles(dir, ['0\n', '1\n', '2\n']);
    const paths = [names[2]!, names[0]!].map((n) => join(dir, n));
    const source = await openSource({
      files: { kind: 'paths', paths },
      format: 'ndjson',
      topic: 't',
    });
    expect(values(await collect(source))).toEqual(['2', '0']);
    expect(source.fileNames).toEqual(paths);
  });

  it('closes batches at maxBatchBytes and yields an oversized record alone, counted', async () => {
    const dir = await tempDir();
    const big = 'x'.repeat(50);
    await writeFiles(dir, [['aaaa', 'bbbb', big, 'cccc', 'dddd', 'eeee'].join('\n') + '\n']);
    const source = await openSource(ndjsonOptions(dir, { maxBatchBytes: 10, maxRecordBytes: 20 }));
    const batches = await collect(source);
    expect(batches.map((b) => values([b]))).toEqual([
      ['aaaa', 'bbbb'],
      [big],
      ['cccc', 'dddd'],
      ['eeee'],
    ]);
    checkSpans(batches);
    expect(source.stats().oversizedRecords).toBe(1);
  });

  it('fails on a line longer than maxBufferBytes, naming the file and where the line starts', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['ok\n' + 'y'.repeat(100) + '\n']);
    const source = await openSource(ndjsonOptions(dir, { readChunkBytes: 16, maxBufferBytes: 64 }));
    const error = await rejection(() => collect(source));
    expect(error).toBeInstanceOf(FileSourceError);
    expect(error).toMatchObject({
      code: 'TWG_FILE_RECORD_TOO_LARGE',
      file: 'f000.ndjson',
      position: 3,
    });
  });

  it('reads a 50 MB file with a bounded buffer', async () => {
    const dir = await tempDir();
    const line = `${'{"k":"'.padEnd(255, 'v')}\n`;
    const chunk = line.repeat(4096);
    const count = Math.ceil((50 * 1024 * 1024) / chunk.length);
    await writeFile(join(dir, 'big.ndjson'), chunk.repeat(count));
    const source = await openSource(
      ndjsonOptions(dir, { maxBatchRecords: 4096, maxBatchBytes: 4 << 20 }),
    );
    let records = 0;
    for await (const batch of source.batches(new AbortController().signal))
      records += batch.records.length;
    expect(records).toBe(count * 4096);
    const stats = source.stats();
    expect(stats.bytesRead).toBe(count * chunk.length);
    expect(stats.maxBufferBytes).toBe(64 * 1024);
  });

  it('refuses a file that changed size since the set was opened', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\n', 'b\n']);
    const source = await openSource(ndjsonOptions(dir));
    await writeFile(join(dir, 'f001.ndjson'), 'b\nc\n');
    const seen: string[] = [];
    const error = await rejection(async () => {
      for await (const b of source.batches(new AbortController().signal)) seen.push(...values([b]));
    });
    expect(error).toMatchObject({ code: 'TWG_FILE_CHANGED', file: 'f001.ndjson' });
    expect(seen).toEqual([]);
  });

  it('refuses a second concurrent iteration and a foreign partition', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n']);
    const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 1 }));
    const first = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    await first.next();
    const error = await rejection(() => collect(source));
    expect(error).toMatchObject({ code: 'TWG_FILE_SOURCE_STATE' });
    await first.return?.();
    expect(() => source.cursorAt({ topic: 'other', partition: 0 }, 1)).toThrow(/not this source/);
  });

  it('an empty set ends at once and has no position', async () => {
    const dir = await tempDir();
    const source = await openSource(ndjsonOptions(dir));
    expect(await collect(source)).toEqual([]);
    expect(() => source.cursorAt(source.partitions()[0]!, 0)).toThrow(/empty file set/);
  });

  it('opens with a clear error when a listed path is missing', async () => {
    const dir = await tempDir();
    const error = await rejection(() =>
      FileSetSource.open({
        files: { kind: 'paths', paths: [join(dir, 'nope')] },
        format: 'ndjson',
        topic: 't',
      }),
    );
    expect(error).toMatchObject({ code: 'TWG_FILE_READ_FAILED', errorClass: 'fatal-config' });
  });
});
