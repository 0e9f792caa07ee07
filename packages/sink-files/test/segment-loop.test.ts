import { readdir } from 'node:fs/promises';
import { waitFor } from '@thalweg/test-services';
import { describe, expect, it } from 'vitest';
import { SubmitQueue, type OffsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { BatchPacker } from '../src/batch-packer.js';
import { BufferPool } from '@thalweg/connector-core';
import type { SegmentFs } from '../src/index.js';
import type { PackedBatch } from '../src/packed-batch.js';
import { runSegmentLoop, type SegmentLoopEnd } from '../src/segment-loop.js';
import type { FromWorker } from '../src/worker-protocol.js';
import { PowerLossFs, type PowerLossOptions } from './doubles/power-loss-fs.js';
import { CLUSTER, FaultyFs, openSink, readAll, settled, tempDir } from './helpers.js';
import { sweep, workload, type Run } from './power-loss-audit.js';

interface Loop {
  readonly done: Promise<SegmentLoopEnd>;
  readonly messages: FromWorker[];
  /** Calls of `take`: one per segment begun, and the last that finds the queue ended. */
  readonly takes: () => number;
  /** The spans of the batches the loop reported durable, in the order it reported them. */
  readonly durable: () => OffsetSpan[];
  /** Hands the loop one more batch (a loop started with `open`). */
  readonly push: (batch: SourceBatch) => void;
  /** Ends the queue (a loop started with `open`). */
  readonly end: () => void;
  /** Batches queued, not yet taken by the loop. */
  readonly queued: () => number;
}

interface LoopOptions {
  /** Runs before the loop starts, after the directory is set up. */
  readonly onReady?: () => void;
  /** The loop's pause between slices, given how many takes there were. */
  readonly pause?: (takes: number) => Promise<void>;
  readonly sliceBytes?: number;
  /** Leaves the queue open, for the test to push more and end it. */
  readonly open?: boolean;
}

/**
 * The writer thread's loop in this thread, on `fs`: `batches` are queued up
 * front (as a busy sink's thread hands them over) and the queue ended
 * (unless `open`), over a directory a sink opened and closed (its manifest
 * begun). At most three batches make a segment.
 */
async function startLoop(
  fs: SegmentFs,
  dir: string,
  batches: readonly SourceBatch[],
  options: LoopOptions = {},
): Promise<Loop> {
  const { pause, sliceBytes } = options;
  const sink = await openSink(dir, { fs });
  await sink.close();
  options.onReady?.();
  const packer = new BatchPacker(CLUSTER, new BufferPool(64 * 1024 * 1024));
  const queue = new SubmitQueue<{ packed: PackedBatch; bytes: number }>({
    maxItems: Number.MAX_SAFE_INTEGER,
    maxBytes: Number.POSITIVE_INFINITY,
  });
  const sent = [...batches];
  const push = (b: SourceBatch) => {
    const packed = packer.pack(b).batch;
    void queue.push({ packed, bytes: packed.bytes });
  };
  batches.forEach(push);
  if (options.open !== true) queue.end();
  const messages: FromWorker[] = [];
  let takes = 0;
  const done = runSegmentLoop({
    fs,
    dir,
    cluster: CLUSTER,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    maxSegmentBytes: 64 * 1024 * 1024,
    maxBatchesPerSegment: 3,
    nextSequence: 0,
    checksums: true,
    take: async (items, bytes) => {
      takes++;
      return (await queue.take(items, bytes))?.map((q) => q.packed) ?? null;
    },
    post: (message) => messages.push(message),
    ...(pause === undefined ? {} : { pause: () => pause(takes) }),
    ...(sliceBytes === undefined ? {} : { sliceBytes }),
  });
  const durable = (): OffsetSpan[] => {
    const spans: OffsetSpan[] = [];
    for (const m of messages) {
      if (m.type !== 'durable') continue;
      spans.push(...sent.slice(spans.length, spans.length + m.batches).map((b) => b.span));
    }
    return spans;
  };
  return {
    done,
    messages,
    takes: () => takes,
    durable,
    push: (b) => {
      sent.push(b);
      push(b);
    },
    end: () => queue.end(),
    queued: () => queue.size.items,
  };
}

/**
 * Waits until `condition` holds. The loop's file operations run on libuv's
 * pool (another thread), so this asks on a short clock, with a deadline.
 */
function until(condition: () => boolean, what: string): Promise<void> {
  return waitFor(condition, what, { everyMs: 1 });
}

/** From now on: the log and the counts start empty, and file fsyncs wait for the release returned. */
function held(fs: FaultyFs): () => void {
  fs.log.length = 0;
  fs.calls.clear();
  return fs.hold('sync');
}

const kinds = (messages: readonly FromWorker[]) =>
  messages.filter((m) => m.type !== 'recycle').map((m) => `${m.type} ${'file' in m ? m.file : ''}`);

describe('the writer thread loop (segment-loop.ts)', () => {
  it('encodes the next segment while the last is written, and commits them in order', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const batches = workload(9);
    let release = (): void => undefined;
    // Slices of 1 byte: no segment is under a slice, so none waits for the one before.
    const loop = await startLoop(fs, dir, batches, {
      onReady: () => (release = held(fs)),
      sliceBytes: 1,
    });
    // Segment 0's fsync is held: the loop has taken segment 1 to encode,
    // and not segment 2 (one committing, one encoded, no more).
    await until(
      () => fs.calls.get('sync') === 1 && loop.takes() === 2,
      "segment 0's fsync held and segment 1 taken",
    );
    expect(await settled(loop.done)).toBe(false);
    expect(loop.takes()).toBe(2);
    // Segment 1's temp file is begun and written (early-attempt.ts), nothing of it made durable.
    const segment1 = fs.log.filter((l) => l.includes('seg-0000000000000001'));
    expect(segment1[0]).toBe('create .seg-0000000000000001.1.tmp');
    expect(segment1.every((l) => /^(create|write) /.test(l))).toBe(true);
    expect(loop.messages).toEqual([]);
    release();
    expect(await loop.done).toBe('ended');
    expect(kinds(loop.messages)).toEqual([
      'durable seg-0000000000000000.arrow',
      'durable seg-0000000000000001.arrow',
      'durable seg-0000000000000002.arrow',
    ]);
    // Segment k+1's file is fsynced and renamed only after segment k's manifest line is fsynced.
    const log = fs.log.filter((l) => /^(sync|rename|appendSync) /.test(l));
    expect(log).toEqual([
      'sync .seg-0000000000000000.1.tmp',
      'rename .seg-0000000000000000.1.tmp -> seg-0000000000000000.arrow',
      'appendSync raw.manifest',
      'sync .seg-0000000000000001.1.tmp',
      'rename .seg-0000000000000001.1.tmp -> seg-0000000000000001.arrow',
      'appendSync raw.manifest',
      'sync .seg-0000000000000002.1.tmp',
      'rename .seg-0000000000000002.1.tmp -> seg-0000000000000002.arrow',
      'appendSync raw.manifest',
    ]);
    const sink = await openSink(dir, { fs });
    for (let p = 0; p < 3; p++) {
      const want = batches.filter((b) => b.span.partition === p).flatMap((b) => [...b.records]);
      expect((await readAll(sink, 't', p)).records.map((r) => r.offset)).toEqual(
        want.map((r) => r.offset),
      );
    }
  });

  it("pauses inside the next segment's encode, so the last segment's commit goes on meanwhile", async () => {
    const dir = await tempDir();
    const log: string[] = [];
    const fs = new FaultyFs(log);
    // Six batches of three 400 KB records: a segment of three batches is
    // about 3.6 MB, over three slices of the encode.
    const batches = workload(6).map((b) => ({
      span: b.span,
      records: b.records.map((r) => ({ ...r, value: Buffer.alloc(400_000, r.offset % 251) })),
    }));
    const firstTemp = '.seg-0000000000000000.1.tmp';
    const loop = await startLoop(fs, dir, batches, {
      onReady: () => (log.length = 0),
      pause: async (takes) => {
        // Segment 1's encode (the second take) waits at its first pause
        // until segment 0's commit has reached its fsync.
        if (takes === 2 && !log.includes(`sync ${firstTemp}`)) {
          await until(() => log.includes(`sync ${firstTemp}`), "segment 0's fsync");
        }
        log.push(`pause while encoding segment ${takes - 1}`);
      },
    });
    expect(await loop.done).toBe('ended');
    const order = log.filter((l) => l.startsWith('pause') || l.endsWith(firstTemp));
    // Segment 0's fsync ran between pauses of segment 1's encode.
    expect(order.indexOf(`sync ${firstTemp}`)).toBeLessThan(
      order.lastIndexOf('pause while encoding segment 1'),
    );
    // Segment 0's slices went to its temp file as they were encoded, before its first pause.
    expect(order.indexOf(`write ${firstTemp}`)).toBeLessThan(
      order.indexOf('pause while encoding segment 0'),
    );
    // Segment 1 closes when segment 0's commit ends, which may come before
    // its third batch is added (that batch then makes segment 2).
    expect(loop.durable()).toEqual(batches.map((b) => b.span));
    expect(kinds(loop.messages).slice(0, 2)).toEqual([
      'durable seg-0000000000000000.arrow',
      'durable seg-0000000000000001.arrow',
    ]);
  });

  it('the next segment takes what arrives while one commits, up to its bounds; the rest makes the one after', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const [b0, b1, b2, b3, b4] = workload(5) as [SourceBatch, ...SourceBatch[]];
    let release = (): void => undefined;
    const loop = await startLoop(fs, dir, [b0], {
      onReady: () => (release = held(fs)),
      open: true,
    });
    await until(() => fs.calls.get('sync') === 1, "segment 0's fsync held");
    // Segment 0 commits (its fsync held); segment 1 grows with b1, then b2
    // and b3, and is full (three batches) before segment 0 is durable.
    loop.push(b1!);
    await until(() => loop.queued() === 0, 'b1 taken');
    loop.push(b2!);
    loop.push(b3!);
    loop.push(b4!);
    loop.end();
    release();
    expect(await loop.done).toBe('ended');
    // Segment 1 holds what came while segment 0 committed, up to three
    // batches; b4 makes segment 2.
    const sizes = loop.messages.flatMap((m) => (m.type === 'durable' ? [m.batches] : []));
    expect(sizes).toEqual([1, 3, 1]);
    expect(loop.durable()).toEqual([b0, b1, b2, b3, b4].map((b) => b!.span));
  });

  it('grows the next segment batch by batch while one commits, writing it early, and closes it when that commit ends', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const [b0, b1, b2, b3] = workload(4) as [SourceBatch, ...SourceBatch[]];
    let release = (): void => undefined;
    // Slices of 1 byte: each batch added is written to the temp file at once.
    const loop = await startLoop(fs, dir, [b0], {
      onReady: () => (release = held(fs)),
      open: true,
      sliceBytes: 1,
    });
    await until(() => fs.calls.get('sync') === 1, "segment 0's fsync held");
    const segment1 = '.seg-0000000000000001.1.tmp';
    const writesOf1 = () => fs.log.filter((l) => l === `write ${segment1}`).length;
    loop.push(b1!);
    await until(() => writesOf1() === 1, 'b1 written to segment 1');
    loop.push(b2!);
    await until(() => writesOf1() === 2, 'b2 written to segment 1');
    // Both are in segment 1's temp file, and segment 0 is still not durable.
    expect(loop.messages.filter((m) => m.type === 'durable')).toEqual([]);
    release();
    // Segment 0's commit ended: segment 1 closes with b1 and b2 (room for a third).
    await until(
      () => loop.messages.filter((m) => m.type === 'durable').length === 2,
      'segments 0 and 1 durable',
    );
    loop.push(b3!);
    loop.end();
    expect(await loop.done).toBe('ended');
    const sizes = loop.messages.flatMap((m) => (m.type === 'durable' ? [m.batches] : []));
    expect(sizes).toEqual([1, 2, 1]);
    expect(loop.durable()).toEqual([b0, b1, b2, b3].map((b) => b!.span));
    // Segment 1's commit wrote its footer only: its batches were in the file already.
    const commit1 = fs.log.slice(fs.log.indexOf('appendSync raw.manifest'));
    expect(commit1.filter((l) => l === `write ${segment1}`)).toHaveLength(1);
  });

  it('batches taken while a commit runs that it outlasts go to the segment after', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const [b0, b1, b2, b3] = workload(4) as [SourceBatch, ...SourceBatch[]];
    let release = (): void => undefined;
    let releaseSegment1 = (): void => undefined;
    let durable = (): number => 0;
    let paused = false;
    const loop = await startLoop(fs, dir, [b0], {
      onReady: () => (release = held(fs)),
      open: true,
      sliceBytes: 1,
      pause: async (takes) => {
        if (takes !== 2 || paused) return;
        paused = true;
        // Inside the first batch of segment 1 (b1, taken with b2 and b3):
        // segment 0's commit ends here, then segment 1's fsync is held.
        release();
        await until(() => durable() === 1, 'segment 0 durable');
        releaseSegment1 = fs.hold('sync');
      },
    });
    durable = () => loop.messages.filter((m) => m.type === 'durable').length;
    await until(() => fs.calls.get('sync') === 1, "segment 0's fsync held");
    // One take gets all three while segment 0 commits.
    loop.push(b1!);
    loop.push(b2!);
    loop.push(b3!);
    await until(() => loop.queued() === 0 && fs.calls.get('sync') === 2, "segment 1's fsync held");
    loop.end();
    releaseSegment1();
    expect(await loop.done).toBe('ended');
    // b1 closed segment 1 when segment 0 was durable; b2 and b3 grew segment 2.
    const sizes = loop.messages.flatMap((m) => (m.type === 'durable' ? [m.batches] : []));
    expect(sizes).toEqual([1, 1, 2]);
    expect(loop.durable()).toEqual([b0, b1, b2, b3].map((b) => b!.span));
  });

  it('a segment that cannot be made durable stops the loop: the one before is reported, the one after never committed', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    let release = (): void => undefined;
    const loop = await startLoop(fs, dir, workload(9), { onReady: () => (release = held(fs)) });
    await until(
      () => fs.calls.get('sync') === 1 && loop.takes() === 2,
      "segment 0's fsync held and segment 1 taken",
    );
    // Segment 0 (written, its fsync held) becomes durable; segment 1's
    // write fails through both attempts.
    fs.fail('write', 2);
    release();
    expect(await loop.done).toBe('failed');
    expect(kinds(loop.messages)).toEqual([
      'durable seg-0000000000000000.arrow',
      `retry ${dir}/seg-0000000000000001.arrow`,
      `failed ${dir}/seg-0000000000000001.arrow`,
    ]);
    expect(loop.durable()).toHaveLength(3);
    // Segment 2, under a slice, waited for segment 1's commit, which failed: never begun.
    expect(fs.log.filter((l) => l.includes('seg-0000000000000002'))).toEqual([]);
  });

  it('a failed commit ends the loop while the next segment waits for batches that never come', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    // Segment 0's write fails through both attempts; the queue stays open and empty.
    const loop = await startLoop(fs, dir, workload(1), {
      onReady: () => fs.fail('write', 2),
      open: true,
    });
    expect(await loop.done).toBe('failed');
    expect(kinds(loop.messages)).toEqual([
      `retry ${dir}/seg-0000000000000000.arrow`,
      `failed ${dir}/seg-0000000000000000.arrow`,
    ]);
    loop.end();
  });

  it('the segment encoded beside a commit that fails is never committed: its temp file is removed', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    // Segment 0's rename fails through both attempts. Slices of 1 byte: segment
    // 1 is encoded (and its temp file written) beside segment 0's commit.
    const loop = await startLoop(fs, dir, workload(9), {
      onReady: () => fs.fail('rename', 2),
      sliceBytes: 1,
    });
    expect(await loop.done).toBe('failed');
    expect(kinds(loop.messages)).toEqual([
      `retry ${dir}/seg-0000000000000000.arrow`,
      `failed ${dir}/seg-0000000000000000.arrow`,
    ]);
    const segment1 = fs.log.filter((l) => l.includes('seg-0000000000000001'));
    expect(segment1[0]).toBe('create .seg-0000000000000001.1.tmp');
    expect(segment1.slice(-2)).toEqual([
      'close .seg-0000000000000001.1.tmp',
      'remove .seg-0000000000000001.1.tmp',
    ]);
    expect(segment1.every((l) => /^(create|write|close|remove) /.test(l))).toBe(true);
    expect(await readdir(dir)).not.toContain('.seg-0000000000000001.1.tmp');
  });
});

/**
 * The loop on the power-loss file system, cut at `options.crashAtOp`;
 * acknowledged: what it reported durable. With `sliceBytes`, the encode
 * pauses (and writes its temp file) after every slice of that many bytes.
 */
const loopUntilCrash =
  (sliceBytes?: number) =>
  async (dir: string, batches: readonly SourceBatch[], options: PowerLossOptions): Promise<Run> => {
    const fs = new PowerLossFs(options);
    let acknowledged: readonly OffsetSpan[] = [];
    try {
      const loop = await startLoop(fs, dir, batches, {
        ...(sliceBytes === undefined ? {} : { sliceBytes }),
      });
      await loop.done.catch(() => undefined);
      acknowledged = loop.durable();
    } catch {
      // The power went while the directory was being set up: nothing was acknowledged.
    }
    return { image: fs.crash(), acknowledged, operations: fs.operations };
  };

describe('the writer thread loop under power loss', () => {
  it.each(['synced-only', 'any-subset', 'torn-sectors'] as const)(
    'loses nothing it reported durable and invents nothing, at every crash point (%s)',
    async (survival) => {
      const { points, failing } = await sweep(loopUntilCrash(), survival);
      expect(points).toBeGreaterThanOrEqual(150);
      expect(failing).toEqual([]);
    },
  );

  it.each(['synced-only', 'any-subset', 'torn-sectors'] as const)(
    'with each segment written to its temp file in slices as it is encoded (%s)',
    async (survival) => {
      const { points, failing } = await sweep(loopUntilCrash(2048), survival);
      // The sweep above has about 170 crash points: the slices' writes add more.
      expect(points).toBeGreaterThanOrEqual(180);
      expect(failing).toEqual([]);
    },
  );
});
