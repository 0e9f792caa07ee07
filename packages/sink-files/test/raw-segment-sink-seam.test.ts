import { describe, expect, it } from 'vitest';
import {
  anchor,
  batchOf,
  FaultyFs,
  openSink,
  readAll,
  recordingTarget,
  settled,
  tempDir,
} from './helpers.js';

describe('RawSegmentSink, inline writer through the SegmentFs seam', () => {
  it('opens only the segments whose batches overlap the span read', async () => {
    const fs = new FaultyFs();
    const sink = await openSink(await tempDir(), { fs });
    const batches = [
      batchOf('t', 0, 0, 10),
      batchOf('t', 1, 0, 10),
      batchOf('t', 0, 10, 20),
      batchOf('t', 0, 20, 30),
    ];
    for (const b of batches) {
      await sink.submit(b, b.span, anchor(b));
      await sink.flush(); // one segment each
    }
    const files = sink.segments().map((s) => s.file);
    expect(files).toHaveLength(4);
    fs.log.length = 0;
    expect((await readAll(sink, 't', 0, 12, 15)).records.map((r) => r.offset)).toEqual([
      12, 13, 14,
    ]);
    expect(fs.log.filter((l) => l.startsWith('readFile'))).toEqual([`readFile ${files[2]!}`]);
    fs.log.length = 0;
    await readAll(sink, 't', 0, 5, 25);
    expect(fs.log.filter((l) => l.startsWith('readFile'))).toEqual([
      `readFile ${files[0]!}`,
      `readFile ${files[2]!}`,
      `readFile ${files[3]!}`,
    ]);
    await sink.close();
  });

  it('never confirms a batch before its segment is fsynced, renamed and its directory fsynced', async () => {
    const log: string[] = [];
    const fs = new FaultyFs(log);
    const sink = await openSink(await tempDir(), { fs, confirm: recordingTarget(log) });
    const release = fs.hold('sync');
    const batches = Array.from({ length: 6 }, (_, i) => batchOf('t', i % 2, i * 10, i * 10 + 10));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    expect(log.filter((l) => l.startsWith('apply'))).toEqual([]);
    release();
    await sink.flush();

    const segments = sink.segments();
    expect(segments.length).toBeGreaterThanOrEqual(2);
    for (const segment of segments) {
      const renamed = log.findIndex(
        (l) => l.startsWith('rename') && l.endsWith(`-> ${segment.file}`),
      );
      const temp = /^rename (\S+) ->/.exec(log[renamed]!)![1]!;
      const synced = log.indexOf(`sync ${temp}`);
      const closed = log.indexOf(`close ${temp}`);
      const dirSynced = log.findIndex((l, i) => i > renamed && l.startsWith('syncDir'));
      expect(synced).toBeGreaterThan(log.indexOf(`write ${temp}`));
      expect(closed).toBeGreaterThan(synced);
      expect(renamed).toBeGreaterThan(closed);
      expect(dirSynced).toBeGreaterThan(renamed);
      for (const b of segment.batches) {
        const applied = log.indexOf(`apply ${b.span.topic}/${b.span.partition}@${b.span.start}`);
        expect(applied).toBeGreaterThan(dirSynced);
      }
    }
    await sink.close();
  });

  it('makes submit wait while the queue is full, until the writer drains it (backpressure)', async () => {
    const fs = new FaultyFs();
    const sink = await openSink(await tempDir(), { fs, maxQueuedBatches: 1 });
    const release = fs.hold('sync');
    const b = (i: number) => batchOf('t', 0, i * 10, i * 10 + 10);
    await sink.submit(b(0), b(0).span, anchor(b(0))); // taken by the writer, held at fsync
    await settled(Promise.resolve());
    await sink.submit(b(1), b(1).span, anchor(b(1))); // fills the queue
    const third = sink.submit(b(2), b(2).span, anchor(b(2)));
    expect(await settled(third)).toBe(false);
    expect(sink.stats().queuedBatches).toBe(1);
    release();
    await third;
    await sink.flush();
    expect((await readAll(sink, 't', 0)).records).toHaveLength(30);
    await sink.close();
  });

  it('bounds the queue by bytes too, admitting an oversized batch alone', async () => {
    const fs = new FaultyFs();
    const sink = await openSink(await tempDir(), { fs, maxQueuedBytes: 1 });
    const release = fs.hold('sync');
    const b = (i: number) => batchOf('t', 0, i * 10, i * 10 + 10);
    await sink.submit(b(0), b(0).span, anchor(b(0)));
    await settled(Promise.resolve());
    await sink.submit(b(1), b(1).span, anchor(b(1)));
    const third = sink.submit(b(2), b(2).span, anchor(b(2)));
    expect(await settled(third)).toBe(false);
    release();
    await third;
    await sink.close();
  });

  it('group-commits: many quick submits land in fewer segments than batches', async () => {
    const fs = new FaultyFs();
    const target = recordingTarget();
    const sink = await openSink(await tempDir(), { fs, confirm: target });
    const release = fs.hold('sync');
    const batches = Array.from({ length: 40 }, (_, i) => batchOf('t', i % 3, i * 10, i * 10 + 10));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    release();
    await sink.flush();
    const stats = sink.stats();
    expect(stats.batchesWritten).toBe(40);
    expect(stats.segmentsWritten).toBe(2);
    expect(stats.coalesce).toBe(20);
    expect(stats.maxBatchesPerBurst).toBe(39);
    expect(stats.bursts).toBe(2);
    expect(target.applied.map((a) => a.receipt.span)).toEqual(batches.map((b) => b.span));
    await sink.close();
  });

  it('splits a burst at the segment bounds', async () => {
    const fs = new FaultyFs();
    const sink = await openSink(await tempDir(), { fs, maxBatchesPerSegment: 4 });
    const release = fs.hold('sync');
    const batches = Array.from({ length: 13 }, (_, i) => batchOf('t', 0, i * 10, i * 10 + 10));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    release();
    await sink.flush();
    expect(sink.segments().map((s) => s.batches.length)).toEqual([1, 4, 4, 4]);
    await sink.close();
  });
});
