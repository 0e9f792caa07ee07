import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { RawSinkError, type RawSegmentSinkOptions } from '../src/index.js';
import {
  anchor,
  batchOf,
  openSink,
  plain,
  readAll,
  record,
  tempDir,
  WRITERS,
  dataFiles,
} from './helpers.js';

describe.each(WRITERS)('RawSegmentSink re-open and redelivery, %s writer', (writer) => {
  const open = (dir: string, options: Partial<RawSegmentSinkOptions> = {}) =>
    openSink(dir, { writer, ...options });

  it('reads after a new open what was written before close, and carries on the sequence', async () => {
    const dir = await tempDir();
    const first = await open(dir);
    const a = batchOf('orders', 0, 0, 10);
    const b = batchOf('orders', 1, 0, 4);
    await first.submit(a, a.span, anchor(a));
    await first.flush();
    await first.submit(b, b.span, anchor(b));
    await first.close();
    const coverage = first.coverage();

    const second = await open(dir);
    expect(second.coverage()).toEqual(coverage);
    expect(second.stats()).toMatchObject({ segmentsIndexed: 2, segmentsWritten: 0 });
    expect(plain((await readAll(second, 'orders', 0)).records)).toEqual(plain(a.records));
    expect(plain((await readAll(second, 'orders', 1)).records)).toEqual(plain(b.records));
    const c = batchOf('orders', 0, 10, 12);
    await second.submit(c, c.span, anchor(c));
    await second.close();
    expect(await dataFiles(dir)).toEqual([
      'seg-0000000000000000.arrow',
      'seg-0000000000000001.arrow',
      'seg-0000000000000002.arrow',
    ]);
    expect(second.durableSpans({ topic: 'orders', partition: 0 })).toEqual([
      offsetSpan('orders', 0, 0, 12),
    ]);
  });

  it('reads a redelivered offset once, across segments and within one', async () => {
    const dir = await tempDir();
    const first = await open(dir);
    const a = batchOf('t', 0, 0, 10);
    await first.submit(a, a.span, anchor(a));
    await first.close();
    // After a restart the source redelivers from its committed position and beyond.
    const second = await open(dir);
    const overlap = batchOf('t', 0, 5, 15);
    await second.submit(a, a.span, anchor(a));
    await second.submit(overlap, overlap.span, anchor(overlap));
    await second.submit(a, a.span, anchor(a));
    await second.flush();
    const { records, batches } = await readAll(second, 't', 0);
    expect(records.map((r) => r.offset)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    expect(plain(records)).toEqual(plain(batchOf('t', 0, 0, 15).records));
    expect(batches.map((b) => b.span)).toEqual([offsetSpan('t', 0, 0, 15)]);
    expect(second.durableSpans({ topic: 't', partition: 0 })).toEqual([offsetSpan('t', 0, 0, 15)]);
    await second.close();
  });

  it('raises a conflict naming both files when one offset is stored twice with a different value', async () => {
    const dir = await tempDir();
    const sink = await open(dir);
    const original = batchOf('t', 0, 0, 5);
    const altered: SourceBatch = {
      span: original.span,
      records: original.records.map((r) =>
        r.offset === 3 ? record(3, { value: Buffer.from('something else') }) : r,
      ),
    };
    await sink.submit(original, original.span, anchor(original));
    await sink.flush();
    await sink.submit(altered, altered.span, anchor(altered));
    await sink.close();

    const error = await readAll(sink, 't', 0).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RawSinkError);
    const e = error as RawSinkError;
    expect(e.code).toBe('TWG_RAW_RECORD_CONFLICT');
    expect(e.offset).toBe(3);
    expect(e.message).toContain('with a different value');
    expect(e.message).toContain(join(dir, 'seg-0000000000000000.arrow'));
    expect(e.message).toContain(join(dir, 'seg-0000000000000001.arrow'));
    // Offsets before the conflict are fine; a window that avoids it reads.
    expect((await readAll(sink, 't', 0, 0, 3)).records.map((r) => r.offset)).toEqual([0, 1, 2]);
    // A new open indexes both (each file is sound on its own); the read still refuses.
    const reopened = await open(dir);
    await expect(readAll(reopened, 't', 0)).rejects.toThrow(/TWG_RAW_RECORD_CONFLICT/);
    await reopened.close();
  });

  it('reports a segment damaged after open when a read reaches it', async () => {
    const dir = await tempDir();
    const { writeFile } = await import('node:fs/promises');
    const sink = await open(dir);
    const a = batchOf('t', 0, 0, 5);
    await sink.submit(a, a.span, anchor(a));
    await sink.flush();
    const file = join(dir, 'seg-0000000000000000.arrow');
    await writeFile(file, 'gone');
    await expect(readAll(sink, 't', 0)).rejects.toThrow(file);
    await sink.close();
  });
});
