import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { compressSync } from 'lz4-napi';
import { describe, expect, it } from 'vitest';
import {
  compressLz4Frame,
  compressLz4FrameSync,
  decompressLz4Frame,
  decompressLz4FrameSync,
  WireCompressionError,
} from '../src/index.js';
import { fixture } from './fixtures.js';

// Debian's `lz4` tool (the reference implementation); CI installs it. A
// missing tool fails these tests rather than skipping them.
const lz4 = (args: string[], input: Uint8Array) =>
  new Uint8Array(execFileSync('lz4', ['-q', ...args], { input, maxBuffer: 1 << 28 }));

function textLike(bytes: number): Uint8Array {
  const line = (i: number) =>
    `{"id":${i},"name":"user-${i % 977}","score":${(i * 0.37).toFixed(2)}}\n`;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const l = line(i);
    parts.push(l);
    size += l.length;
  }
  return new Uint8Array(Buffer.from(parts.join('')).subarray(0, bytes));
}

function thrown(run: () => unknown): WireCompressionError {
  try {
    run();
  } catch (error) {
    if (error instanceof WireCompressionError) return error;
    throw error;
  }
  throw new Error('expected a WireCompressionError');
}

describe('LZ4 frame', () => {
  it('round-trips any bytes, sync and async', async () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), (data) => {
        expect(decompressLz4FrameSync(compressLz4FrameSync(data))).toEqual(Buffer.from(data));
      }),
    );
    const big = textLike(3_000_000);
    const frame = await compressLz4Frame(big);
    expect(frame.byteLength).toBeLessThan(big.byteLength / 2);
    expect(Buffer.from(await decompressLz4Frame(frame)).equals(big)).toBe(true);
  });

  it('writes the frame format (content checksum on request), not the block API', () => {
    const frame = compressLz4FrameSync(textLike(1000));
    expect([...frame.subarray(0, 4)]).toEqual([0x04, 0x22, 0x4d, 0x18]);
    expect(frame[4]! & 0x04).toBe(0);
    expect(compressLz4FrameSync(textLike(1000), { contentChecksum: true })[4]! & 0x04).toBe(0x04);
    // lz4-napi's block API output has a 4-byte size prefix and no magic.
    const block = thrown(() => decompressLz4FrameSync(compressSync(Buffer.from('hello'))));
    expect(block.code).toBe('TWG_LZ4_FRAME_INVALID');
    expect(block.offset).toBe(0);
  });

  it('decompresses what the lz4 tool compressed', () => {
    for (const data of [
      textLike(2_500_000),
      new Uint8Array(randomBytes(300_000)),
      new Uint8Array(0),
    ]) {
      for (const args of [['-c'], ['-9', '-c', '--content-size'], ['-c', '-BD', '-B4']]) {
        expect(Buffer.from(decompressLz4FrameSync(lz4(args, data))).equals(data)).toBe(true);
      }
    }
  });

  it('produces frames the lz4 tool decompresses', () => {
    for (const data of [textLike(2_500_000), new Uint8Array(randomBytes(300_000))]) {
      const ours = compressLz4FrameSync(data, { blockChecksums: true });
      expect(Buffer.from(lz4(['-d', '-c'], ours)).equals(data)).toBe(true);
    }
  });

  it('reads the LZ4 frame liblz4 wrote for pyarrow', () => {
    expect(Buffer.from(decompressLz4FrameSync(fixture('sample.txt.lz4')))).toEqual(
      Buffer.from(fixture('sample.txt')),
    );
  });

  it('reads concatenated frames and skips skippable frames', () => {
    const skippable = new Uint8Array([0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    const joined = Buffer.concat([
      lz4(['-c'], Buffer.from('hello ')),
      skippable,
      compressLz4FrameSync(Buffer.from('world')),
    ]);
    expect(Buffer.from(decompressLz4FrameSync(joined)).toString()).toBe('hello world');
  });

  it('names the byte offset of garbage and truncation', () => {
    const garbage = thrown(() => decompressLz4FrameSync(Buffer.from('not lz4 at all')));
    expect(garbage.code).toBe('TWG_LZ4_FRAME_INVALID');
    expect(garbage.message).toMatch(/at byte 0: magic/);
    const frame = compressLz4FrameSync(textLike(100_000));
    const cut = thrown(() => decompressLz4FrameSync(frame.subarray(0, frame.byteLength - 50)));
    expect(cut.code).toBe('TWG_LZ4_FRAME_INVALID');
    expect(cut.offset).toBeGreaterThan(6);
    const second = Buffer.concat([frame, Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x40])]);
    expect(thrown(() => decompressLz4FrameSync(second)).offset).toBe(frame.byteLength + 5);
  });

  it('refuses a flipped bit through the content checksum', () => {
    const data = textLike(50_000);
    const frame = Buffer.from(compressLz4FrameSync(data, { contentChecksum: true }));
    frame[frame.byteLength - 2]! ^= 0x10;
    expect(thrown(() => decompressLz4FrameSync(frame)).code).toBe('TWG_LZ4_FRAME_INVALID');
  });

  it('refuses a bomb before decompressing it', () => {
    const bomb = compressLz4FrameSync(new Uint8Array(32 << 20));
    expect(bomb.byteLength).toBeLessThan(200_000);
    const error = thrown(() => decompressLz4FrameSync(bomb, { maxOutputBytes: 1 << 20 }));
    expect(error.code).toBe('TWG_DECOMPRESS_LIMIT');
    expect(error.errorClass).toBe('fatal-config');
    expect(decompressLz4FrameSync(bomb, { maxOutputBytes: 64 << 20 }).byteLength).toBe(32 << 20);
  });
});
