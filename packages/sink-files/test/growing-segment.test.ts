import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BufferPool } from '@thalweg/connector-core';
import { BatchPacker } from '../src/batch-packer.js';
import { GrowingSegment, type GrowingSegmentDeps } from '../src/growing-segment.js';
import type { PackedBatch } from '../src/packed-batch.js';
import { packedSegmentChunks } from '../src/segment-codec.js';
import { batchOf, CLUSTER, FaultyFs, record, tempDir } from './helpers.js';

const join_ = (chunks: readonly Uint8Array[]) => Buffer.concat(chunks);

/** Seven packed batches of 40 records of 1 KiB values each (about 41 KiB a batch). */
function packedBatches(): PackedBatch[] {
  const packer = new BatchPacker(CLUSTER, new BufferPool(1 << 24));
  return Array.from({ length: 7 }, (_, b) => {
    const batch = batchOf('t', b % 2, 40 * b, 40 * b + 40);
    const records = batch.records.map((r) =>
      record(r.offset, { value: Buffer.alloc(1024, r.offset % 251) }),
    );
    return packer.pack({ span: batch.span, records }).batch;
  });
}

async function growing(
  options: Partial<GrowingSegmentDeps> & { readonly log?: string[] } = {},
): Promise<{ segment: GrowingSegment; fs: FaultyFs; dir: string }> {
  const dir = await tempDir();
  const fs = new FaultyFs(options.log);
  const segment = new GrowingSegment(
    {
      fs,
      dir,
      cluster: CLUSTER,
      checksums: true,
      maxSegmentBytes: 64 * 1024 * 1024,
      maxBatchesPerSegment: 1024,
      pause: () => Promise.resolve(),
      sliceBytes: 50_000,
      ...options,
    },
    7,
  );
  return { segment, fs, dir };
}

describe('a segment grown batch by batch (growing-segment.ts)', () => {
  it('encodes the same bytes and layout as the encode in one piece', async () => {
    const batches = packedBatches();
    for (const checksums of [true, false]) {
      const { segment } = await growing({ checksums });
      for (const b of batches) await segment.add(b);
      const whole = packedSegmentChunks(CLUSTER, batches, checksums);
      const { segment: grown } = segment.finish();
      expect(join_(grown.chunks).equals(join_(whole.chunks))).toBe(true);
      expect(grown.bytes).toBe(whole.bytes);
      expect(grown.layout).toEqual(whole.layout);
    }
  });

  it('writes each slice to its temp file, then pauses, once a slice is encoded since the last pause', async () => {
    const batches = packedBatches();
    const slice = 100_000;
    // Where each batch's message ends in the file, from the one-piece encode.
    const ends = packedSegmentChunks(CLUSTER, batches, true).layout.batches.map(
      (b) => b.at + b.length,
    );
    const expected: string[] = [];
    let sliceEnd = slice;
    /** Where the file ends after the last slice written: the end of the batch that filled it. */
    let written = 0;
    ends.forEach((end, i) => {
      expected.push(`batch ${i}`);
      if (end >= sliceEnd) {
        written = end;
        if (sliceEnd === slice) expected.push('create .seg-0000000000000007.1.tmp');
        expected.push('write .seg-0000000000000007.1.tmp', 'pause');
        sliceEnd = end + slice;
      }
    });
    // About 41 KiB a batch: a pause every two or three batches.
    expect(expected.filter((e) => e === 'pause').length).toBeGreaterThanOrEqual(2);
    const log: string[] = [];
    const { segment, dir } = await growing({
      log,
      sliceBytes: slice,
      pause: () => {
        log.push('pause');
        return Promise.resolve();
      },
    });
    for (const [i, b] of batches.entries()) {
      log.push(`batch ${i}`);
      await segment.add(b);
    }
    expect(log).toEqual(expected);
    // The temp file holds the encoded bytes up to the last slice written.
    const { segment: grown, early } = segment.finish();
    const onDisk = await readFile(join(dir, '.seg-0000000000000007.1.tmp'));
    expect(onDisk.equals(join_(grown.chunks).subarray(0, onDisk.byteLength))).toBe(true);
    expect(onDisk.byteLength).toBe(written);
    expect(early).toBeDefined();
    await segment.abandon();
  });

  it('begins no temp file for a segment under a slice, and its abandon removes nothing', async () => {
    const { segment, fs } = await growing({ sliceBytes: 1024 * 1024 });
    for (const b of packedBatches().slice(0, 2)) await segment.add(b);
    expect(segment.finish().early).toBeUndefined();
    await segment.abandon();
    expect(fs.log).toEqual([]);
  });

  it('takes any one batch when empty, and no batch past its bounds', async () => {
    const batches = packedBatches();
    const one = batches[0] as PackedBatch;
    const bySize = await growing({ maxSegmentBytes: one.bytes + 1 });
    expect(bySize.segment.fits(one)).toBe(true);
    await bySize.segment.add(one);
    expect(bySize.segment.full).toBe(false);
    expect(bySize.segment.fits(batches[1] as PackedBatch)).toBe(false);

    const tiny = await growing({ maxSegmentBytes: 1 });
    expect(tiny.segment.fits(one)).toBe(true);
    await tiny.segment.add(one);
    expect(tiny.segment.full).toBe(true);

    const byCount = await growing({ maxBatchesPerSegment: 2 });
    await byCount.segment.add(one);
    expect(byCount.segment.full).toBe(false);
    await byCount.segment.add(batches[1] as PackedBatch);
    expect(byCount.segment.full).toBe(true);
    expect(byCount.segment.fits(batches[2] as PackedBatch)).toBe(false);
  });
});
