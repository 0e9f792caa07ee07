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
}

/**
 * The writer thread's loop in this thread, on `fs`: `batches` are queued up
 * front (as a busy sink's thread hands them over) and the queue ended, over
 * a directory a sink opened and closed (its manifest begun); `onReady`
 * runs then, before the loop starts. Three batches make a segment.
 */
async function startLoop(
  fs: SegmentFs,
  dir: string,
  batches: readonly SourceBatch[],
  onReady: () => void = () => undefined,
  pause?: (takes: number) => Promise<void>,
  sliceBytes?: number,
): Promise<Loop> {
  const sink = await openSink(dir, { fs });
  await sink.close();
  onReady();
  const packer = new BatchPacker(CLUSTER, new BufferPool(64 * 1024 * 1024));
  const queue = new SubmitQueue<{ packed: PackedBatch; bytes: number }>({
    maxItems: Number.MAX_SAFE_INTEGER,
    maxBytes: Number.POSITIVE_INFINITY,
  });
  for (const b of batches) {
    const packed = packer.pack(b).batch;
    void queue.push({ packed, bytes: packed.bytes });
  }
  queue.end();
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
      spans.push(...batches.slice(spans.length, spans.length + m.batches).map((b) => b.span));
    }
    return spans;
  };
  return { done, messages, takes: () => takes, durable };
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
    const loop = await startLoop(fs, dir, batches, () => (release = held(fs)));
    // Segment 0's fsync is held: the loop has taken segment 1 to encode,
    // and not segment 2 (one committing, one encoded, no more).
    await until(
      () => fs.calls.get('sync') === 1 && loop.takes() === 2,
      "segment 0's fsync held and segment 1 taken",
    );
    expect(await settled(loop.done)).toBe(false);
    expect(loop.takes()).toBe(2);
    // Segment 1's temp file is begun (early-attempt.ts), nothing of it made durable.
    expect(fs.log.filter((l) => l.includes('seg-0000000000000001'))).toEqual([
      'create .seg-0000000000000001.1.tmp',
    ]);
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
    const loop = await startLoop(
      fs,
      dir,
      batches,
      () => (log.length = 0),
      async (takes) => {
        // Segment 1's encode (the second take) waits at its first pause
        // until segment 0's commit has reached its fsync.
        if (takes === 2 && !log.includes(`sync ${firstTemp}`)) {
          await until(() => log.includes(`sync ${firstTemp}`), "segment 0's fsync");
        }
        log.push(`pause while encoding segment ${takes - 1}`);
      },
    );
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
    expect(kinds(loop.messages)).toEqual([
      'durable seg-0000000000000000.arrow',
      'durable seg-0000000000000001.arrow',
    ]);
  });

  it('a segment that cannot be made durable stops the loop: the one before is reported, the one after never committed', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    let release = (): void => undefined;
    const loop = await startLoop(fs, dir, workload(9), () => (release = held(fs)));
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
    // Segment 2 was encoded, its temp file begun, then removed: never committed.
    expect(fs.log.filter((l) => l.includes('seg-0000000000000002'))).toEqual([
      'create .seg-0000000000000002.1.tmp',
      'close .seg-0000000000000002.1.tmp',
      'remove .seg-0000000000000002.1.tmp',
    ]);
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
      const loop = await startLoop(fs, dir, batches, undefined, undefined, sliceBytes);
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
