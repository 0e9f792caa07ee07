import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FileSourceError, type FileSetSource } from '../src/index.js';
import {
  checkSpans,
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

const line = fc.record({
  text: fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '_')),
  ending: fc.constantFrom('\n', '\r\n', '\n\n', '\r\n\r\n'),
});
const file = fc.record({
  lines: fc.array(line, { maxLength: 12 }),
  unterminated: fc.option(
    fc.string({ maxLength: 10 }).map((s) => s.replace(/[\r\n]/g, '_')),
    { nil: undefined },
  ),
});

function render(f: {
  lines: { text: string; ending: string }[];
  unterminated: string | undefined;
}): string {
  return f.lines.map((l) => l.text + l.ending).join('') + (f.unterminated ?? '');
}

function partition(source: FileSetSource) {
  return source.partitions()[0]!;
}

describe('resuming from a cursor', () => {
  it('a read cut at any boundary and resumed in a fresh source equals one full read', async () => {
    const root = await tempDir();
    await fc.assert(
      fc.asyncProperty(
        fc.array(file, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: 1, max: 5 }),
        fc.nat(),
        fc.nat(),
        async (files, batchRecords, batchBytes, resumedBatchRecords, cutSeed, askSeed) => {
          const dir = await mkdtemp(join(root, 'run-'));
          await writeFiles(dir, files.map(render));
          const options = ndjsonOptions(dir, {
            maxBatchRecords: batchRecords,
            maxBatchBytes: batchBytes,
          });
          const full = await collect(await openSource(options));
          checkSpans(full);

          const first = await openSource(options);
          const cut = cutSeed % (full.length + 1);
          const head = await collect(first, cut);
          const boundaries = [0, ...head.map((b) => b.span.end)];
          const next = boundaries[askSeed % boundaries.length]!;
          const cursor = stored(first.cursorAt(partition(first), next));
          expect(cursor).toMatchObject({
            kind: 'file-set',
            files: first.fileNames,
            nextOffset: next,
          });

          const second = await openSource(
            ndjsonOptions(dir, { maxBatchRecords: resumedBatchRecords }),
          );
          second.seek(partition(second), cursor);
          const rest = await collect(second);
          checkSpans(rest, next);
          const kept = head.flatMap((b) => b.records).filter((r) => r.offset < next);
          expect([...kept.map((r) => Buffer.from(r.value).toString()), ...values(rest)]).toEqual(
            values(full),
          );
          expect([...kept.map((r) => r.offset), ...offsets(rest)]).toEqual(offsets(full));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the cursor at the end of the set resumes into files appended to the set', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n', 'c']);
    const first = await openSource(ndjsonOptions(dir));
    const all = await collect(first);
    const cursor = stored(first.cursorAt(partition(first), 3));
    expect(cursor).toEqual({
      kind: 'file-set',
      files: ['f000.ndjson', 'f001.ndjson'],
      file: 'f001.ndjson',
      position: 1,
      nextOffset: 3,
      consumed: [
        { size: 4, digest: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
        { size: 1, digest: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
      ],
    });
    expect(values(all)).toEqual(['a', 'b', 'c']);
    await writeFile(join(dir, 'f002.ndjson'), 'd\n');
    const grown = await openSource(ndjsonOptions(dir));
    grown.seek(partition(grown), cursor);
    const rest = await collect(grown);
    expect(values(rest)).toEqual(['d']);
    expect(offsets(rest)).toEqual([3]);
  });

  describe('refusals, each naming the cursor field', () => {
    async function setUp() {
      const dir = await tempDir();
      await writeFiles(dir, ['a\nbb\n', 'c\n', 'd\n']);
      const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 1 }));
      const batches = await collect(source, 2);
      const cursor = stored(source.cursorAt(partition(source), batches[1]!.span.end));
      const fresh = await openSource(ndjsonOptions(dir));
      return { dir, cursor, fresh };
    }

    function fieldOf(run: () => unknown): { code: string; field: string | undefined } {
      const error = refusal(run);
      if (!(error instanceof FileSourceError)) throw error;
      return { code: error.code, field: error.field };
    }

    it('a cursor of another kind', async () => {
      const { fresh } = await setUp();
      expect(
        fieldOf(() => fresh.seek(partition(fresh), { kind: 'log-offset', nextOffset: 2 })),
      ).toEqual({
        code: 'TWG_FILE_CURSOR_INVALID',
        field: 'cursor.kind',
      });
    });

    it('files missing, renamed or reordered', async () => {
      const { cursor, fresh } = await setUp();
      if (cursor.kind !== 'file-set') throw new Error('file-set cursor expected');
      const [a, b, c] = cursor.files as [string, string, string];
      const cases = [
        [[a, c], 'cursor.files[1]'],
        [[a, 'renamed.ndjson', c], 'cursor.files[1]'],
        [[b, a, c], 'cursor.files[0]'],
        [[a, b, c, 'f003.ndjson'], 'cursor.files[3]'],
      ] as const;
      for (const [files, field] of cases) {
        expect(fieldOf(() => fresh.seek(partition(fresh), { ...cursor, files: files }))).toEqual({
          code: 'TWG_FILE_CURSOR_INVALID',
          field,
        });
      }
      expect(
        fieldOf(() => fresh.seek(partition(fresh), { ...cursor, file: 'zz.ndjson' })).field,
      ).toBe('cursor.file');
    });

    it('a position beyond the file or off a record boundary', async () => {
      const { cursor, fresh } = await setUp();
      if (cursor.kind !== 'file-set') throw new Error('file-set cursor expected');
      expect(cursor).toMatchObject({ file: 'f000.ndjson', position: 5 });
      for (const position of [6, 100]) {
        expect(fieldOf(() => fresh.seek(partition(fresh), { ...cursor, position }))).toEqual({
          code: 'TWG_FILE_CURSOR_INVALID',
          field: 'cursor.position',
        });
      }
      const error = refusal(() => fresh.seek(partition(fresh), { ...cursor, position: 3 }));
      expect(error.message).toMatch(/does not follow a '\\n'/);
      expect(fieldOf(() => fresh.seek(partition(fresh), { ...cursor, position: -1 })).field).toBe(
        'cursor.position',
      );
      expect(
        fieldOf(() => fresh.seek(partition(fresh), { ...cursor, nextOffset: 1.5 })).field,
      ).toBe('cursor.nextOffset');
      // A cursor without what it consumed (as written before it recorded it)
      // is checked for a record boundary only.
      const { consumed, ...bare } = cursor;
      expect(consumed).toHaveLength(1);
      fresh.seek(partition(fresh), { ...bare, position: 2 });
      expect(values(await collect(fresh))).toEqual(['bb', 'c', 'd']);
    });

    it('seek after batches() started', async () => {
      const { cursor, fresh } = await setUp();
      await collect(fresh, 1);
      expect(fieldOf(() => fresh.seek(partition(fresh), cursor)).code).toBe(
        'TWG_FILE_SOURCE_STATE',
      );
    });
  });

  describe('cursorAt', () => {
    it('translates batch boundaries only, drops those below the last asked, repeats the last', async () => {
      const dir = await tempDir();
      await writeFiles(dir, ['a\nb\nc\nd\ne\nf\n']);
      const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 2 }));
      const p = partition(source);
      await collect(source);
      expect(source.stats().pendingBoundaries).toBe(4);
      expect(refusal(() => source.cursorAt(p, 1))).toMatchObject({
        code: 'TWG_FILE_POSITION_UNKNOWN',
      });
      expect(refusal(() => source.cursorAt(p, 7))).toMatchObject({
        code: 'TWG_FILE_POSITION_UNKNOWN',
      });
      expect(source.cursorAt(p, 4)).toMatchObject({
        file: 'f000.ndjson',
        position: 8,
        nextOffset: 4,
      });
      expect(source.stats().pendingBoundaries).toBe(2);
      expect(source.cursorAt(p, 4)).toMatchObject({ position: 8 });
      expect(refusal(() => source.cursorAt(p, 2)).message).toMatch(/dropped/);
      expect(source.cursorAt(p, 6)).toMatchObject({ position: 12, nextOffset: 6 });
      expect(source.stats().pendingBoundaries).toBe(1);
    });
  });
});
