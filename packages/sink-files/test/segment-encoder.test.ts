import { describe, expect, it } from 'vitest';
import { BufferPool } from '@thalweg/connector-core';
import { BatchPacker } from '../src/batch-packer.js';
import { packedSegmentChunks } from '../src/segment-codec.js';
import { packedSegmentChunksInSlices } from '../src/segment-encoder.js';
import { batchOf, CLUSTER, record } from './helpers.js';

const join = (chunks: readonly Uint8Array[]) => Buffer.concat(chunks);

/** Seven packed batches of 40 records of 1 KiB values each (about 41 KiB a batch). */
function packedBatches() {
  const packer = new BatchPacker(CLUSTER, new BufferPool(1 << 24));
  return Array.from({ length: 7 }, (_, b) => {
    const batch = batchOf('t', b % 2, 40 * b, 40 * b + 40);
    const records = batch.records.map((r) =>
      record(r.offset, { value: Buffer.alloc(1024, r.offset % 251) }),
    );
    return packer.pack({ span: batch.span, records }).batch;
  });
}

describe('a segment encoded in slices (segment-encoder.ts)', () => {
  it('writes the same bytes and layout as the encode in one piece', async () => {
    const batches = packedBatches();
    for (const checksums of [true, false]) {
      const whole = packedSegmentChunks(CLUSTER, batches, checksums);
      const sliced = await packedSegmentChunksInSlices(
        CLUSTER,
        batches,
        checksums,
        () => Promise.resolve(),
        50_000,
      );
      expect(join(sliced.chunks).equals(join(whole.chunks))).toBe(true);
      expect(sliced.bytes).toBe(whole.bytes);
      expect(sliced.layout).toEqual(whole.layout);
    }
  });

  it('pauses between batches, once a slice of bytes is encoded since the last pause', async () => {
    const batches = packedBatches();
    const slice = 100_000;
    // Where each batch's message ends in the file, from the one-piece encode.
    const ends = packedSegmentChunks(CLUSTER, batches, true).layout.batches.map(
      (b) => b.at + b.length,
    );
    const expected: string[] = [];
    let sliceEnd = slice;
    ends.forEach((end, i) => {
      expected.push(`batch ${i}`);
      if (end >= sliceEnd) {
        expected.push('pause');
        sliceEnd = end + slice;
      }
    });
    // About 41 KiB a batch: a pause every two or three batches.
    expect(expected.filter((e) => e === 'pause').length).toBeGreaterThanOrEqual(2);
    const log: string[] = [];
    const watched = new Proxy(batches, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) log.push(`batch ${key}`);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    await packedSegmentChunksInSlices(
      CLUSTER,
      watched,
      true,
      () => {
        log.push('pause');
        return Promise.resolve();
      },
      slice,
    );
    expect(log).toEqual(expected);
  });
});
