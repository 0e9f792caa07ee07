import { describe, expect, it } from 'vitest';
import { decompressZstd, WireCompressionError } from '../src/index.js';
import { fixture } from './fixtures.js';

function thrown(run: () => unknown): WireCompressionError {
  try {
    run();
  } catch (error) {
    if (error instanceof WireCompressionError) return error;
    throw error;
  }
  throw new Error('expected a WireCompressionError');
}

describe('zstd decode', () => {
  const frame = fixture('sample.txt.zst');
  const text = Buffer.from(fixture('sample.txt'));

  it('reads the zstd frame libzstd wrote for pyarrow', () => {
    expect(Buffer.from(decompressZstd(frame)).equals(text)).toBe(true);
  });

  it('reads concatenated frames and skips skippable ones', () => {
    const skippable = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 7, 7]);
    const joined = Buffer.concat([frame, skippable, frame]);
    expect(Buffer.from(decompressZstd(joined)).equals(Buffer.concat([text, text]))).toBe(true);
  });

  it('names the byte offset of garbage and truncation', () => {
    const garbage = thrown(() => decompressZstd(Buffer.from('definitely not zstd')));
    expect(garbage.code).toBe('TWG_ZSTD_FRAME_INVALID');
    expect(garbage.offset).toBe(0);
    const cut = thrown(() => decompressZstd(frame.subarray(0, frame.byteLength - 30)));
    expect(cut.code).toBe('TWG_ZSTD_FRAME_INVALID');
    expect(cut.offset).toBeGreaterThan(0);
  });

  it('refuses output beyond the limit before decompressing', () => {
    const error = thrown(() => decompressZstd(frame, { maxOutputBytes: 1000 }));
    expect(error.code).toBe('TWG_DECOMPRESS_LIMIT');
  });

  it('refuses frames that need a dictionary', () => {
    // Frame header descriptor 0x01: a 1-byte dictionary id follows the window byte.
    const withDictionary = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x00, 0x07, 0x01, 0, 0]);
    expect(thrown(() => decompressZstd(withDictionary)).message).toMatch(/dictionary/);
  });
});
