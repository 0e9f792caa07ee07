import { writeFile, readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RawSinkEvent } from '../src/index.js';
import { RawSinkError } from '../src/index.js';
import {
  anchor,
  batchOf,
  FaultyFs,
  openSink,
  plain,
  readAll,
  recordingTarget,
  settled,
  tempDir,
  dataFiles,
} from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<RawSinkError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (error instanceof RawSinkError) return error;
  throw new Error(`expected a RawSinkError, got ${String(error)}`);
}

describe('RawSegmentSink write faults', () => {
  for (const op of ['sync', 'rename', 'syncDir', 'write', 'create'] as const) {
    it(`retries the whole segment when ${op} fails once: confirmed once, no temp left`, async () => {
      const dir = await tempDir();
      const fs = new FaultyFs();
      const target = recordingTarget();
      const events: RawSinkEvent[] = [];
      const sink = await openSink(dir, { fs, confirm: target, onError: (e) => events.push(e) });
      fs.fail(op);
      const b = batchOf('t', 0, 0, 10);
      await sink.submit(b, b.span, anchor(b));
      await sink.flush();
      expect(target.applied).toHaveLength(1);
      expect(sink.stats().writeRetries).toBe(1);
      expect(events.map((e) => e.kind)).toEqual(['write-retry']);
      // The retry wrote under a new temp name; the first one is gone.
      const temps = fs.log.filter((l) => l.startsWith('create')).map((l) => l.split(' ')[1]);
      expect(new Set(temps).size).toBe(temps.length);
      expect(await dataFiles(dir)).toEqual(['seg-0000000000000000.arrow']);
      expect(plain((await readAll(sink, 't', 0)).records)).toEqual(plain(b.records));
      await sink.close();
    });
  }

  it('reports its failing writes in a row and its queue fill to flow control, and clears them once durable', async () => {
    const fs = new FaultyFs();
    let release = (): void => undefined;
    let midSpell = (): void => undefined;
    const reachedMidSpell = new Promise<void>((resolve) => (midSpell = resolve));
    const sink = await openSink(await tempDir(), {
      fs,
      maxQueuedBatches: 4,
      // The second retry holds the third attempt, so the test can look mid-spell.
      onError: (e) => {
        if (e.kind === 'write-retry' && e.attempt === 2) {
          release = fs.hold('create');
          midSpell();
        }
      },
    });
    expect(sink.pressure()).toEqual({ queueFill: 0, consecutiveFailures: 0 });
    fs.fail('sync', 2);
    const b = (i: number) => batchOf('t', 0, i * 10, i * 10 + 10);
    await sink.submit(b(0), b(0).span, anchor(b(0)));
    await reachedMidSpell;
    await sink.submit(b(1), b(1).span, anchor(b(1)));
    await sink.submit(b(2), b(2).span, anchor(b(2)));
    expect(sink.pressure()).toEqual({ queueFill: 0.5, consecutiveFailures: 2 });
    release();
    await sink.flush();
    expect(sink.pressure()).toEqual({ queueFill: 0, consecutiveFailures: 0 });
    await sink.close();
  });

  it('fails the sink when the retries run out: nothing confirmed, flush names the file and cause', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const target = recordingTarget();
    const events: RawSinkEvent[] = [];
    const sink = await openSink(dir, { fs, confirm: target, onError: (e) => events.push(e) });
    const ok = batchOf('t', 0, 0, 5);
    await sink.submit(ok, ok.span, anchor(ok));
    await sink.flush();

    fs.fail('sync', Infinity, new Error('EIO: disk on fire'));
    const release = fs.hold('create');
    const doomed = batchOf('t', 0, 5, 10);
    await sink.submit(doomed, doomed.span, anchor(doomed));
    await settled(Promise.resolve());
    const queued = batchOf('t', 0, 10, 15);
    await sink.submit(queued, queued.span, anchor(queued));
    release();

    const error = await rejection(sink.flush());
    expect(error.code).toBe('TWG_RAW_WRITE_FAILED');
    expect(error.file).toBe(join(dir, 'seg-0000000000000001.arrow'));
    expect(error.message).toContain('seg-0000000000000001.arrow');
    expect(error.message).toContain('EIO: disk on fire');
    expect(error.message).toContain('3 attempts');
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0]);
    expect(sink.failed).toBe(error);
    expect(events.at(-1)).toEqual({ kind: 'failed', error });
    // Later submits and flushes fail with the same error; close reports it too.
    expect(await rejection(sink.submit(queued, queued.span, anchor(queued)))).toBe(error);
    expect(await rejection(sink.flush())).toBe(error);
    expect(await rejection(sink.close())).toBe(error);
    expect(await dataFiles(dir)).toEqual(['seg-0000000000000000.arrow']);
    // What was durable before the failure stays readable.
    expect((await readAll(sink, 't', 0)).records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
  });

  it('rejects a submit waiting for queue space when the sink fails', async () => {
    const fs = new FaultyFs();
    const sink = await openSink(await tempDir(), { fs, maxQueuedBatches: 1 });
    fs.fail('rename', Infinity);
    const release = fs.hold('create');
    const b = (i: number) => batchOf('t', 0, i * 10, i * 10 + 10);
    await sink.submit(b(0), b(0).span, anchor(b(0)));
    await settled(Promise.resolve());
    await sink.submit(b(1), b(1).span, anchor(b(1)));
    const waiting = sink.submit(b(2), b(2).span, anchor(b(2)));
    expect(await settled(waiting)).toBe(false);
    release();
    expect((await rejection(waiting)).code).toBe('TWG_RAW_WRITE_FAILED');
  });

  it('keeps confirming, in order, after a confirmation target throws', async () => {
    const events: RawSinkEvent[] = [];
    const applied: number[] = [];
    const sink = await openSink(await tempDir(), {
      confirm: {
        apply: async (_confirm, receipt) => {
          applied.push(receipt.span.start);
          if (receipt.span.start === 10) throw new Error('broker commit failed');
        },
      },
      onError: (e) => {
        events.push(e);
        throw new Error('a throwing logger must not stop the lane either');
      },
    });
    const batches = Array.from({ length: 4 }, (_, i) => batchOf('t', 0, i * 10, i * 10 + 10));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    const later = batchOf('t', 0, 40, 50);
    await sink.submit(later, later.span, anchor(later));
    await sink.flush();
    expect(applied).toEqual([0, 10, 20, 30, 40]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'confirm-failed', span: batches[1]!.span });
    expect(sink.stats().confirmFailures).toBe(1);
    await sink.close();
  });
});

describe('RawSegmentSink crash leftovers', () => {
  it('deletes temp files a crash left and keeps the segments', async () => {
    const dir = await tempDir();
    const first = await openSink(dir);
    const b = batchOf('t', 0, 0, 5);
    await first.submit(b, b.span, anchor(b));
    await first.close();
    await writeFile(join(dir, '.seg-0000000000000001.1.tmp'), 'half a segment');
    await writeFile(join(dir, 'notes.txt'), 'not ours: left alone');

    const reopened = await openSink(dir);
    expect(await dataFiles(dir)).toEqual(['notes.txt', 'seg-0000000000000000.arrow']);
    expect(plain((await readAll(reopened, 't', 0)).records)).toEqual(plain(b.records));
    await reopened.close();
  });

  it('refuses to open over a truncated segment, naming the file and the offsets it held', async () => {
    const dir = await tempDir();
    const sink = await openSink(dir);
    const b = batchOf('t', 0, 0, 50);
    await sink.submit(b, b.span, anchor(b));
    await sink.close();
    const file = join(dir, 'seg-0000000000000000.arrow');
    const size = (await readFile(file)).byteLength;
    await truncate(file, size - 17);
    const error = await rejection(openSink(dir));
    expect(error.code).toBe('TWG_RAW_SEGMENT_MISSING');
    expect(error.file).toBe(file);
    expect(error.spans).toEqual([b.span]);
    expect(error.message).toContain(file);
    expect(error.message).toContain('t/0 [0, 50)');
  });

  it('opens over a segment damaged in place (open reads no segment) and refuses its read, naming the file', async () => {
    const dir = await tempDir();
    const sink = await openSink(dir);
    const b = batchOf('t', 0, 0, 50);
    await sink.submit(b, b.span, anchor(b));
    await sink.close();
    const file = join(dir, 'seg-0000000000000000.arrow');
    const size = (await readFile(file)).byteLength;
    await writeFile(file, Buffer.alloc(size, 'x'));
    const reopened = await openSink(dir);
    const error = await rejection(readAll(reopened, 't', 0));
    expect(error.code).toBe('TWG_RAW_CHECKSUM_MISMATCH');
    expect(error.message).toContain(file);
    expect(error.spans).toEqual([b.span]);
    await reopened.close();
  });

  it('refuses to open a directory written for another cluster', async () => {
    const dir = await tempDir();
    const sink = await openSink(dir);
    const b = batchOf('t', 0, 0, 5);
    await sink.submit(b, b.span, anchor(b));
    await sink.close();
    const error = await rejection(openSink(dir, { cluster: 'cluster-b' }));
    expect(error.message).toContain('cluster');
    expect(error.message).toContain(join(dir, 'raw.manifest'));
  });
});
