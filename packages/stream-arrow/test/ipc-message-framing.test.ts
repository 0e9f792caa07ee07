import { describe, expect, it } from 'vitest';
import {
  END_OF_STREAM,
  framedMetadataBytes,
  frameIpcMessage,
  writeFramedMetadata,
} from '../src/ipc-message-framing.js';

describe('IPC message framing (ipc-message-framing.ts)', () => {
  it('frames metadata of every length mod 8: marker, padded length, flatbuffer, zeros, body', () => {
    for (let n = 0; n <= 17; n++) {
      const metadata = new Uint8Array(n).fill(0xab);
      const body = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
      const framed = frameIpcMessage(metadata, body);
      const padded = Math.ceil(n / 8) * 8;
      expect(framed.byteLength).toBe(8 + padded + 8);
      expect(framedMetadataBytes(n)).toBe(8 + padded);
      const view = new DataView(framed.buffer);
      expect(view.getUint32(0, true)).toBe(0xffffffff);
      expect(view.getInt32(4, true)).toBe(padded);
      expect([...framed.subarray(8, 8 + n)]).toEqual(Array<number>(n).fill(0xab));
      expect([...framed.subarray(8 + n, 8 + padded)]).toEqual(Array<number>(padded - n).fill(0));
      expect([...framed.subarray(8 + padded)]).toEqual([...body]);
    }
  });

  it('writes into a buffer holding old bytes, zeroing the padding, and returns where the body goes', () => {
    const out = new Uint8Array(64).fill(0xee);
    const bodyAt = writeFramedMetadata(out, 16, new Uint8Array([9, 9, 9]));
    expect(bodyAt).toBe(16 + 8 + 8);
    expect([...out.subarray(16, bodyAt)]).toEqual([
      255, 255, 255, 255, 8, 0, 0, 0, 9, 9, 9, 0, 0, 0, 0, 0,
    ]);
    // Nothing outside the framed metadata is touched.
    expect(out[15]).toBe(0xee);
    expect(out[bodyAt]).toBe(0xee);
  });

  it('ends a stream with a marker and a zero length', () => {
    expect([...END_OF_STREAM]).toEqual([255, 255, 255, 255, 0, 0, 0, 0]);
  });
});
