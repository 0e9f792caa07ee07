import { describe, expect, it } from 'vitest';
import { BINARY_KEY_BYTES } from '../src/index.js';
import { BinarySet, type BinarySetSnapshot } from '../src/memory/binary-set.js';

/** Key i: its first byte i, the rest fixed (all distinct for i < 256). */
function key(...ids: number[]): Int32Array {
  const bytes = new Uint8Array(ids.length * BINARY_KEY_BYTES);
  ids.forEach((id, i) => {
    bytes.fill(7, i * BINARY_KEY_BYTES, (i + 1) * BINARY_KEY_BYTES);
    bytes[i * BINARY_KEY_BYTES] = id;
  });
  return new Int32Array(bytes.buffer);
}

const places = (n: number, partition = 0, from = 0) => ({
  partitions: new Uint32Array(n).fill(partition),
  offsets: Float64Array.from({ length: n }, (_, i) => from + i),
});

const held = (set: BinarySet, ids: number[], now: number): number[] => {
  const answer = set.getMany(key(...ids), ids.length, now);
  return ids.filter((_, i) => answer.found[i] === 1);
};

const NOW = 1_000_000;

describe('BinarySet', () => {
  it('answers the place each key was added with, and nothing for others', () => {
    const set = new BinarySet(4, 1);
    set.addMany(key(1, 2), 2, NOW + 100, places(2, 3, 40), 10);
    const answer = set.getMany(key(2, 9, 1), 3, NOW);
    expect([...answer.found]).toEqual([1, 0, 1]);
    expect([...answer.partitions]).toEqual([3, 0, 3]);
    expect([...answer.offsets]).toEqual([41, 0, 40]);
  });

  it('reads a key as absent once its TTL passed, and sweeps it', () => {
    const set = new BinarySet(4, 1);
    set.addMany(key(1), 1, NOW + 100, places(1), 10);
    set.addMany(key(2), 1, NOW + 200, places(1), 10);
    expect(held(set, [1, 2], NOW + 99)).toEqual([1, 2]);
    expect(held(set, [1, 2], NOW + 100)).toEqual([2]);
    expect(set.size).toBe(2);
    set.sweep(NOW + 100);
    expect(set.size).toBe(1);
    expect(held(set, [1, 2], NOW + 150)).toEqual([2]);
  });

  it('evicts the oldest add beyond maxEntries; a re-add makes a key the newest', () => {
    const set = new BinarySet(4, 1);
    set.addMany(key(1, 2, 3), 3, NOW + 1000, places(3), 3);
    // 1 again: its place is replaced and it moves behind 2 and 3.
    set.addMany(key(1), 1, NOW + 1000, places(1, 5, 77), 3);
    set.addMany(key(4), 1, NOW + 1000, places(1), 3);
    expect(held(set, [1, 2, 3, 4], NOW)).toEqual([1, 3, 4]);
    set.addMany(key(5, 6), 2, NOW + 1000, places(2), 3);
    expect(held(set, [1, 2, 3, 4, 5, 6], NOW)).toEqual([4, 5, 6]);
    expect(set.size).toBe(3);
    const answer = set.getMany(key(1), 1, NOW);
    expect(answer.found[0]).toBe(0);
  });

  it('keeps eviction order across growth and many re-adds (ring compaction)', () => {
    const set = new BinarySet(2, 1);
    // 200 keys, each re-added 5 times: the ring is compacted many times over.
    for (let round = 0; round < 5; round++) {
      for (let id = 0; id < 200; id++) set.addMany(key(id), 1, NOW + 1000, places(1), 1000);
    }
    expect(set.size).toBe(200);
    // Re-add 0..99 once more: 100..199 are now the oldest.
    for (let id = 0; id < 100; id++) set.addMany(key(id), 1, NOW + 1000, places(1), 1000);
    set.addMany(key(250), 1, NOW + 1000, places(1), 101);
    const all = Array.from({ length: 200 }, (_, i) => i);
    expect(held(set, all, NOW)).toEqual(all.slice(0, 100));
    expect(held(set, [250], NOW)).toEqual([250]);
  });

  it('a snapshot restores the same keys, places, expiries and eviction order', () => {
    const set = new BinarySet(4, 1);
    set.addMany(key(1, 2, 3), 3, NOW + 100, places(3, 2, 10), 10);
    set.addMany(key(1), 1, NOW + 300, places(1, 4, 99), 10);
    const again = BinarySet.restored(
      JSON.parse(JSON.stringify(set.snapshot())) as BinarySetSnapshot,
    );
    expect(again.size).toBe(3);
    const answer = again.getMany(key(1, 2, 3), 3, NOW);
    expect([...answer.partitions]).toEqual([4, 2, 2]);
    expect([...answer.offsets]).toEqual([99, 11, 12]);
    expect(held(again, [1, 2, 3], NOW + 200)).toEqual([1]);
    again.addMany(key(4), 1, NOW + 300, places(1), 2);
    // 2 was the oldest, 3 next: 1 (re-added) stays.
    expect(held(again, [1, 2, 3, 4], NOW)).toEqual([1, 4]);
  });

  it('refuses a snapshot whose columns disagree', () => {
    const good = new BinarySet(4, 1);
    good.addMany(key(1), 1, NOW, places(1), 10);
    const s = good.snapshot();
    expect(() => BinarySet.restored({ ...s, offsets: [] })).toThrow(/columns/);
    expect(() => BinarySet.restored({ ...s, partitions: [-1] })).toThrow(/columns/);
  });

  it('claims: a held key answers its place, a new one is added with the given place, also for a later copy in the call', () => {
    const set = new BinarySet(4, 1);
    set.addMany(key(1), 1, NOW + 100, places(1, 9, 50), 10);
    const answer = set.claimMany(key(1, 2, 2, 3), 4, NOW, NOW + 100, places(4, 0, 10), 10);
    expect([...answer.found]).toEqual([1, 0, 1, 0]);
    expect([...answer.partitions]).toEqual([9, 0, 0, 0]);
    expect([...answer.offsets]).toEqual([50, 11, 11, 13]);
    expect(set.size).toBe(3);
    // A held key's TTL is not restarted by a claim; an expired one is claimed afresh.
    const later = set.claimMany(key(1), 1, NOW + 100, NOW + 200, places(1, 2, 7), 10);
    expect([...later.found]).toEqual([0]);
    expect([...later.offsets]).toEqual([7]);
  });

  it('claims within maxEntries, evicting the oldest', () => {
    const set = new BinarySet(4, 1);
    set.addMany(key(1, 2), 2, NOW + 100, places(2), 2);
    set.claimMany(key(2, 3), 2, NOW, NOW + 100, places(2), 2);
    expect(held(set, [1, 2, 3], NOW)).toEqual([2, 3]);
  });
});
