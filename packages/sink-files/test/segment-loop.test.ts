import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { SourceBatch } from '@thalweg/connector-core';
import { FaultyFs, openSink, readAll, settled, tempDir } from './helpers.js';
import { held, kinds, startLoop, until } from './loop-harness.js';
import { workload } from './power-loss-audit.js';

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
