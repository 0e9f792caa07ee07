import { appendFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceCursor } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { FileSourceError, type FileSetSource } from '../src/index.js';
import {
  collect,
  ndjsonOptions,
  offsets,
  openSource,
  refusal,
  stored,
  tempDir,
  values,
  writeFiles,
} from './helpers.js';

function partition(source: FileSetSource) {
  return source.partitions()[0]!;
}

/** Reads the whole set and returns the cursor after its last record, as stored. */
async function consumeAll(dir: string): Promise<SourceCursor> {
  const source = await openSource(ndjsonOptions(dir));
  const batches = await collect(source);
  return stored(source.cursorAt(partition(source), batches.at(-1)!.span.end));
}

async function resumed(dir: string, cursor: SourceCursor): Promise<FileSetSource> {
  const source = await openSource(ndjsonOptions(dir));
  source.seek(partition(source), cursor);
  return source;
}

function changed(run: () => unknown): FileSourceError {
  const error = refusal(run);
  if (!(error instanceof FileSourceError)) throw error;
  expect(error.code).toBe('TWG_FILE_CHANGED');
  return error;
}

describe('a cursor remembers what it consumed', () => {
  it('reads on from where it stopped in a consumed file that grew', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n', 'c\n']);
    const cursor = await consumeAll(dir);
    await appendFile(join(dir, 'f001.ndjson'), 'd\ne\n');
    const rest = await collect(await resumed(dir, cursor));
    expect(values(rest)).toEqual(['d', 'e']);
    expect(offsets(rest)).toEqual([3, 4]);
  });

  it('refuses a file before the cursor that grew, naming it (its records would shift every offset after it)', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n', 'c\n']);
    const cursor = await consumeAll(dir);
    await appendFile(join(dir, 'f000.ndjson'), 'late\n');
    const source = await openSource(ndjsonOptions(dir));
    const error = changed(() => source.seek(partition(source), cursor));
    expect(error.file).toBe('f000.ndjson');
    expect(error.message).toMatch(/"f000\.ndjson".*grew from 4 to 9 bytes/);
  });

  it('refuses a consumed part that changed, at the same size and when the file also grew', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n', 'c\nd\n']);
    const cursor = await consumeAll(dir);
    // Rewritten in place, same size: a stored offset would name another record.
    await writeFile(join(dir, 'f001.ndjson'), 'x\ny\n');
    const same = await openSource(ndjsonOptions(dir));
    const error = changed(() => same.seek(partition(same), cursor));
    expect(error.file).toBe('f001.ndjson');
    expect(error.message).toMatch(
      /first 4 bytes, already consumed, are not the bytes that were read/,
    );
    // Replaced by a longer file (a rotation): growth does not excuse the change.
    await writeFile(join(dir, 'f001.ndjson'), 'x\ny\nz\n');
    const longer = await openSource(ndjsonOptions(dir));
    expect(changed(() => longer.seek(partition(longer), cursor)).file).toBe('f001.ndjson');
    // An earlier file rewritten at the same size.
    await writeFile(join(dir, 'f001.ndjson'), 'c\nd\n');
    await writeFile(join(dir, 'f000.ndjson'), 'A\nB\n');
    const earlier = await openSource(ndjsonOptions(dir));
    expect(changed(() => earlier.seek(partition(earlier), cursor)).file).toBe('f000.ndjson');
  });

  it('refuses a consumed file that shrank', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n', 'c\nd\n']);
    const cursor = await consumeAll(dir);
    await truncate(join(dir, 'f001.ndjson'), 2);
    const source = await openSource(ndjsonOptions(dir));
    const error = changed(() => source.seek(partition(source), cursor));
    expect(error.file).toBe('f001.ndjson');
    expect(error.message).toMatch(/is 2 bytes, shorter than the 4 bytes already consumed/);
  });

  it('tells a change near the end of a large consumed prefix', async () => {
    const dir = await tempDir();
    const big = Array.from({ length: 2000 }, (_, i) => `{"n":${i}}\n`).join('');
    await writeFiles(dir, [big]);
    const cursor = await consumeAll(dir);
    await writeFile(join(dir, 'f000.ndjson'), big.replace('{"n":1999}', '{"n":9999}'));
    const source = await openSource(ndjsonOptions(dir));
    expect(changed(() => source.seek(partition(source), cursor)).file).toBe('f000.ndjson');
  });
});
