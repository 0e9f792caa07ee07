import { describe, expect, it } from 'vitest';
import {
  decodePiece,
  encodePiece,
  MAX_PIECE_BYTES,
  MAX_PIECE_KEYS,
} from '../src/etcd/binary-piece.js';
import { binaryKeys } from './support/binary-set-contract.js';

const EXPIRES = 1_800_000_000_000;

function roundTrip(partitions: number[], offsets: number[]) {
  const n = offsets.length;
  const keys = binaryKeys(...offsets.map((_, i) => i + 1));
  const value = encodePiece(
    keys,
    Uint32Array.from(partitions),
    Float64Array.from(offsets),
    0,
    n,
    EXPIRES,
  );
  return { value, keys, piece: decodePiece(value) };
}

describe('a binary piece (an etcd value of a binary set)', () => {
  it('round-trips a piece of one partition in 20 bytes a key', () => {
    const { value, keys, piece } = roundTrip([3, 3, 3], [2 ** 40, 2 ** 40 + 7, 2 ** 40 + 1]);
    expect(value.byteLength).toBe(32 + 3 * 20);
    expect(piece).toMatchObject({ count: 3, expiresAt: EXPIRES });
    expect([...(piece?.keys ?? [])]).toEqual([...keys]);
    expect([...(piece?.partitions ?? [])]).toEqual([3, 3, 3]);
    expect([...(piece?.offsets ?? [])]).toEqual([2 ** 40, 2 ** 40 + 7, 2 ** 40 + 1]);
  });

  it('round-trips mixed partitions, or offsets spanning 2^32, in columns', () => {
    const mixed = roundTrip([1, 2], [5, 6]);
    expect(mixed.value.byteLength).toBe(32 + 2 * 28);
    expect([...(mixed.piece?.partitions ?? [])]).toEqual([1, 2]);
    const wide = roundTrip([0, 0], [0, 2 ** 32]);
    expect(wide.value.byteLength).toBe(32 + 2 * 28);
    expect([...(wide.piece?.offsets ?? [])]).toEqual([0, 2 ** 32]);
    // Read from any byte offset (etcd's buffers need not be aligned).
    const shifted = new Uint8Array(wide.value.byteLength + 3).subarray(3);
    shifted.set(wide.value);
    expect(decodePiece(shifted)?.offsets[1]).toBe(2 ** 32);
  });

  it('decodes anything else to null: garbage, another version or layout, a wrong length', () => {
    const { value } = roundTrip([0], [1]);
    expect(decodePiece(new TextEncoder().encode('{"expiresAt":1,"entries":[]}'))).toBeNull();
    expect(decodePiece(value.subarray(0, 40))).toBeNull();
    for (const [at, byte] of [
      [0, 0x41],
      [4, 2],
      [5, 7],
    ] as const) {
      const bad = new Uint8Array(value);
      bad[at] = byte;
      expect(decodePiece(bad)).toBeNull();
    }
  });

  it('keeps the largest piece under the put bound', () => {
    expect(32 + MAX_PIECE_KEYS * 28).toBeLessThanOrEqual(MAX_PIECE_BYTES);
  });
});
