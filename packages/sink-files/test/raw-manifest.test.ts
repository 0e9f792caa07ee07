import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offsetSpan } from '@thalweg/connector-core';
import { MANIFEST_FILE, parseManifest } from '../src/raw-manifest.js';
import { DAMAGED_DIR, RawSinkError, segmentName } from '../src/index.js';
import {
  anchor,
  batchOf,
  dataFiles,
  FaultyFs,
  openSink,
  readAll,
  recordingTarget,
  tempDir,
  WRITERS,
} from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<RawSinkError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof RawSinkError))
    throw new Error(`expected a RawSinkError, got ${String(error)}`);
  return error;
}

/** Three segments of t/0: [0, 10), [10, 20), [20, 30), one flush each. */
async function threeSegments(dir: string, writer: 'inline' | 'worker') {
  const sink = await openSink(dir, { writer });
  for (let i = 0; i < 3; i++) {
    const b = batchOf('t', 0, i * 10, i * 10 + 10);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
  }
  await sink.close();
}

describe.each(WRITERS)('raw knows what it made durable, %s writer', (writer) => {
  it('lists every segment in the manifest, and opens from it without reading a segment', async () => {
    const dir = await tempDir();
    await threeSegments(dir, writer);
    const path = join(dir, MANIFEST_FILE);
    const manifest = parseManifest(await readFile(path), path);
    expect(manifest.entries.map((e) => e.file)).toEqual([0, 1, 2].map(segmentName));
    expect(manifest.entries.map((e) => e.batches.map((b) => b.span.start))).toEqual([
      [0],
      [10],
      [20],
    ]);
    const fs = new FaultyFs();
    const sink = await openSink(dir, { fs });
    expect(fs.log.filter((l) => l.startsWith('readFile'))).toEqual(['readFile raw.manifest']);
    expect(sink.durableSpans({ topic: 't', partition: 0 })).toEqual([offsetSpan('t', 0, 0, 30)]);
    expect((await readAll(sink, 't', 0)).records).toHaveLength(30);
    await sink.close();
  });

  it.each([
    ['the middle', 1, offsetSpan('t', 0, 10, 20)],
    ['the end', 2, offsetSpan('t', 0, 20, 30)],
  ] as const)(
    'refuses to open when the segment at %s is deleted, naming its offset range',
    async (_, n, span) => {
      const dir = await tempDir();
      await threeSegments(dir, writer);
      const file = join(dir, segmentName(n));
      await rm(file);
      const e = await rejection(openSink(dir, { writer }));
      expect(e.code).toBe('TWG_RAW_SEGMENT_MISSING');
      expect(e.file).toBe(file);
      expect(e.spans).toEqual([span]);
      expect(e.message).toContain(`t/0 [${span.start}, ${span.end})`);
    },
  );
});

describe('raw manifest crash leftovers', () => {
  it('cuts a torn last line and deletes the unlisted segment it was for: never confirmed', async () => {
    const dir = await tempDir();
    await threeSegments(dir, 'inline');
    const path = join(dir, MANIFEST_FILE);
    const whole = await readFile(path);
    // A crash mid-append: the last line lost its tail.
    const cut = whole.lastIndexOf(0x0a, whole.byteLength - 2) + 1;
    await writeFile(path, whole.subarray(0, cut + 20));
    const sink = await openSink(dir);
    expect(sink.durableSpans({ topic: 't', partition: 0 })).toEqual([offsetSpan('t', 0, 0, 20)]);
    expect(await dataFiles(dir)).toEqual([segmentName(0), segmentName(1)]);
    expect((await readFile(path)).byteLength).toBe(cut);
    const b = batchOf('t', 0, 20, 30);
    await sink.submit(b, b.span, anchor(b));
    await sink.close();
    const again = await openSink(dir);
    expect(again.durableSpans({ topic: 't', partition: 0 })).toEqual([offsetSpan('t', 0, 0, 30)]);
    await again.close();
  });

  it('cuts a last line that kept its end and lost its start, and keeps the segment it named aside', async () => {
    const dir = await tempDir();
    await threeSegments(dir, 'inline');
    const path = join(dir, MANIFEST_FILE);
    const whole = await readFile(path);
    // A disk that writes sector by sector lost the start of the last append
    // and kept its end, newline included: a whole line that fails its checksum.
    const cut = whole.lastIndexOf(0x0a, whole.byteLength - 2) + 1;
    const torn = Buffer.from(whole);
    torn.fill(0, cut, cut + 16);
    await writeFile(path, torn);
    const lines: string[] = [];
    const sink = await openSink(dir, { log: (l) => lines.push(l) });
    expect(sink.durableSpans({ topic: 't', partition: 0 })).toEqual([offsetSpan('t', 0, 0, 20)]);
    expect(await dataFiles(dir)).toEqual([DAMAGED_DIR, segmentName(0), segmentName(1)]);
    expect(await readdir(join(dir, DAMAGED_DIR))).toEqual([segmentName(2)]);
    expect(lines.some((l) => l.includes(`${segmentName(2)} moved to damaged/`))).toBe(true);
    expect((await readFile(path)).byteLength).toBe(cut);
    await sink.close();
  });

  it('refuses a complete line that fails its checksum, naming the line', async () => {
    const dir = await tempDir();
    await threeSegments(dir, 'inline');
    const path = join(dir, MANIFEST_FILE);
    const text = (await readFile(path, 'utf8')).replace('"seq":1', '"seq":7');
    await writeFile(path, text);
    const e = await rejection(openSink(dir));
    expect(e.code).toBe('TWG_RAW_MANIFEST_CORRUPT');
    expect(e.message).toContain(`${path} line 3 fails its checksum`);
  });

  it('refuses segments with no manifest (deleted), rather than guessing what raw holds', async () => {
    const dir = await tempDir();
    await threeSegments(dir, 'inline');
    await rm(join(dir, MANIFEST_FILE));
    const e = await rejection(openSink(dir));
    expect(e.code).toBe('TWG_RAW_MANIFEST_CORRUPT');
    expect(e.message).toContain('no raw.manifest');
  });

  it('refuses a segment file it never listed inside its sequence', async () => {
    const dir = await tempDir();
    await threeSegments(dir, 'inline');
    const path = join(dir, MANIFEST_FILE);
    const lines = (await readFile(path, 'utf8')).split('\n');
    // Header, seg 0, (seg 1 dropped), seg 2: each line is sound on its own.
    await writeFile(path, [lines[0], lines[1], lines[3], ''].join('\n'));
    const e = await rejection(openSink(dir));
    expect(e.code).toBe('TWG_RAW_MANIFEST_CORRUPT');
    expect(e.message).toContain(segmentName(1));
  });

  it('confirms a batch only after its manifest line is fsynced', async () => {
    const dir = await tempDir();
    const log: string[] = [];
    const fs = new FaultyFs(log);
    const confirm = recordingTarget(log);
    const sink = await openSink(dir, { fs, confirm });
    const b = batchOf('t', 0, 0, 5);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    await sink.close();
    const steps = log.filter((l) => /^(syncDir|appendSync|apply) /.test(l)).slice(-3);
    expect(steps).toEqual([
      `syncDir ${dir.split('/').at(-1)}`,
      'appendSync raw.manifest',
      'apply t/0@0',
    ]);
  });

  it('fails the sink, confirming nothing, when the manifest append fails', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const confirm = recordingTarget();
    const sink = await openSink(dir, { fs, confirm });
    fs.fail('appendSync');
    const b = batchOf('t', 0, 0, 5);
    await sink.submit(b, b.span, anchor(b));
    const e = await rejection(sink.flush());
    expect(e.code).toBe('TWG_RAW_WRITE_FAILED');
    expect(e.message).toContain('manifest line');
    expect(confirm.applied).toEqual([]);
    await sink.close().catch(() => undefined);
  });
});
