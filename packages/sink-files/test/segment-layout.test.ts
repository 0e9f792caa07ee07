import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BatchPacker } from '../src/batch-packer.js';
import { BufferPool } from '@thalweg/connector-core';
import { checksumOf, checksumOfChunks } from '../src/checksum.js';
import { packedSegmentChunks } from '../src/segment-codec.js';
import { layoutDamage } from '../src/segment-layout.js';
import { RawSinkError, decodeSegment, segmentName } from '../src/index.js';
import { anchor, batchOf, CLUSTER, openSink, readAll, tempDir, WRITERS } from './helpers.js';

function encoded() {
  const packer = new BatchPacker(CLUSTER, new BufferPool(0));
  const batches = [batchOf('t', 0, 0, 20), batchOf('t', 1, 0, 7), batchOf('u', 0, 100, 130)];
  const segment = packedSegmentChunks(
    CLUSTER,
    batches.map((b) => packer.pack(b).batch),
  );
  return { batches, segment, bytes: Buffer.concat(segment.chunks) };
}

function refusal(f: () => unknown): RawSinkError {
  try {
    f();
  } catch (error) {
    if (error instanceof RawSinkError) return error;
    throw error;
  }
  throw new Error('expected a RawSinkError');
}

describe('segment checksums (CRC32C)', () => {
  it('computes the standard CRC32C, also across chunk boundaries', () => {
    expect(checksumOf(Buffer.from('123456789'))).toBe(0xe3069283);
    const chunks = [Buffer.from('1234'), Buffer.from('56'), Buffer.from('789')];
    expect(checksumOfChunks(chunks, 0, 9)).toBe(0xe3069283);
    expect(checksumOfChunks(chunks, 2, 7)).toBe(checksumOf(Buffer.from('34567')));
  });

  it('lays the head, every batch and the tail end to end over the whole file, each checksummed', () => {
    const { segment, bytes } = encoded();
    const { layout } = segment;
    expect(layout.bytes).toBe(bytes.byteLength);
    expect(layout.batches).toHaveLength(3);
    let at = layout.batches[0]!.at;
    for (const b of layout.batches) {
      expect(b.at).toBe(at);
      expect(checksumOf(bytes.subarray(b.at, b.at + b.length))).toBe(b.crc);
      at += b.length;
    }
    expect([...layoutDamage(bytes, layout, [])]).toEqual([]);
  });

  it('finds a flip of any single byte of the file, naming where it is', () => {
    const { segment, bytes, batches } = encoded();
    const spans = batches.map((b) => b.span);
    for (let i = 0; i < bytes.byteLength; i++) {
      const damaged = Buffer.from(bytes);
      damaged[i] = (damaged[i] as number) ^ 0x01;
      const e = refusal(() => decodeSegment(damaged, 'seg', { layout: segment.layout, spans }));
      expect(e.code).toBe('TWG_RAW_CHECKSUM_MISMATCH');
      expect(e.position).toBeLessThanOrEqual(i);
      const inBatch = segment.layout.batches.findIndex((b) => i >= b.at && i < b.at + b.length);
      expect(e.spans).toEqual(inBatch === -1 ? spans : [spans[inBatch]]);
    }
  });

  it('checks a segment on its own (no directory manifest) against the checksums it carries', () => {
    const { segment, bytes, batches } = encoded();
    const second = segment.layout.batches[1]!;
    const damaged = Buffer.from(bytes);
    // The last byte of the batch body: a value byte, not structure.
    damaged[second.at + second.length - 1] =
      (damaged[second.at + second.length - 1] as number) ^ 0x40;
    const e = refusal(() => decodeSegment(damaged, 'seg-x'));
    expect(e.code).toBe('TWG_RAW_CHECKSUM_MISMATCH');
    expect(e.position).toBe(second.at);
    expect(e.spans).toEqual([batches[1]!.span]);
    expect(e.message).toContain('segment seg-x, byte');
    expect(e.message).toContain('t/1 [0, 7)');
  });
});

describe.each(WRITERS)('a flipped byte on disk, %s writer', (writer) => {
  it('fails the read with the file, byte and offsets named instead of returning the changed value', async () => {
    const dir = await tempDir();
    const sink = await openSink(dir, { writer });
    const a = batchOf('t', 0, 0, 50);
    await sink.submit(a, a.span, anchor(a));
    await sink.close();
    const file = join(dir, segmentName(0));
    const bytes = await readFile(file);
    // "value-42" is stored once, in the batch body: change one letter of it.
    const at = bytes.indexOf('value-42');
    expect(at).toBeGreaterThan(0);
    bytes[at] = 'V'.charCodeAt(0);
    await writeFile(file, bytes);
    const error = await readAll(sink, 't', 0).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RawSinkError);
    const e = error as RawSinkError;
    expect(e.code).toBe('TWG_RAW_CHECKSUM_MISMATCH');
    expect(e.file).toBe(file);
    expect(e.position).toBeLessThanOrEqual(at);
    expect(e.message).toContain('t/0 [0, 50)');
  });
});
