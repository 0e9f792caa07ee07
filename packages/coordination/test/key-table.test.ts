import { describe, expect, it } from 'vitest';
import { BINARY_KEY_BYTES, keyHash, KeyTable, keyWords } from '../src/memory/key-table.js';

/** `n` distinct keys, key i's four words derived from i (deterministic). */
function keys(n: number, from = 0): Int32Array {
  const words = new Int32Array(n * 4);
  for (let i = 0; i < n; i++) {
    const k = from + i;
    words.set([k, Math.imul(k, 0x9e3779b1), k ^ 0x5bd1e995, ~k], i * 4);
  }
  return words;
}

const SEED = 12345;

describe('KeyTable', () => {
  it('finds what it holds, exactly, and nothing else', () => {
    const table = new KeyTable(8, undefined, SEED);
    const held = keys(5);
    for (let i = 0; i < 5; i++) expect(table.insert(held, i)).toBe(i);
    expect(table.size).toBe(5);
    for (let i = 0; i < 5; i++) expect(table.find(held, i)).toBe(i);
    const other = keys(5, 100);
    for (let i = 0; i < 5; i++) expect(table.find(other, i)).toBe(-1);
    // A key differing from a held one in its last word only is another key.
    const near = held.slice(0, 4);
    near[3] = (near[3] ?? 0) + 1;
    expect(table.find(near, 0)).toBe(-1);
  });

  it('answers an insert of a held key with its entry, and says it created nothing', () => {
    const table = new KeyTable(8, undefined, SEED);
    const k = keys(1);
    expect(table.insert(k, 0)).toBe(0);
    expect(table.created).toBe(true);
    expect(table.insert(k.slice(), 0)).toBe(0);
    expect(table.created).toBe(false);
    expect(table.size).toBe(1);
  });

  it('keeps keys that share a slot apart (probing), and finds them after a removal between them', () => {
    const table = new KeyTable(8, undefined, SEED);
    // Collect keys until three land in one home slot of the 16: the same seed, the same slots.
    const all = keys(400);
    const home = new Map<number, number[]>();
    for (let i = 0; i < 400; i++) {
      const slot = keyHash(all, i * 4, SEED) & 15;
      const list = home.get(slot) ?? [];
      list.push(i);
      home.set(slot, list);
    }
    const same = [...home.values()].find((l) => l.length >= 3)?.slice(0, 3) ?? [];
    expect(same).toHaveLength(3);
    const [a = 0, b = 0, c = 0] = same;
    const ea = table.insert(all, a);
    const eb = table.insert(all, b);
    const ec = table.insert(all, c);
    expect(new Set([ea, eb, ec]).size).toBe(3);
    table.remove(eb);
    expect(table.find(all, a)).toBe(ea);
    expect(table.find(all, b)).toBe(-1);
    // Past the tombstone left by b.
    expect(table.find(all, c)).toBe(ec);
    // b again reuses the tombstone and a freed entry, and c is not duplicated.
    expect(table.insert(all, b)).toBe(eb);
    expect(table.insert(all, c)).toBe(ec);
    expect(table.size).toBe(3);
  });

  it('grows past its capacity, keeping every entry number and key, and tells its caller', () => {
    const widened: number[] = [];
    const table = new KeyTable(8, (c) => widened.push(c), SEED);
    expect(table.capacity).toBe(8);
    const many = keys(1000);
    const entries: number[] = [];
    for (let i = 0; i < 1000; i++) entries.push(table.insert(many, i));
    expect(widened).toEqual([16, 32, 64, 128, 256, 512, 1024]);
    expect(table.capacity).toBe(1024);
    for (let i = 0; i < 1000; i++) expect(table.find(many, i)).toBe(entries[i]);
    const out = new Int32Array((2 * BINARY_KEY_BYTES) / 4);
    table.copyKey(entries[999] ?? 0, out, 1);
    expect([...out.subarray(4)]).toEqual([...many.subarray(999 * 4, 1000 * 4)]);
  });

  it('rehashes away tombstones without growing while few keys are live', () => {
    const widened: number[] = [];
    const table = new KeyTable(8, (c) => widened.push(c), SEED);
    // Add and remove far more keys than the slots: tombstones force rehashes at the same size.
    for (let round = 0; round < 100; round++) {
      const k = keys(3, round * 3);
      const entries = [0, 1, 2].map((i) => table.insert(k, i));
      for (const e of entries) table.remove(e);
      expect(table.size).toBe(0);
    }
    expect(widened).toEqual([]);
    const k = keys(3, 0);
    expect(table.find(k, 0)).toBe(-1);
  });

  it('agrees with a Map over a long run of inserts and removals, through growth and rehashes', () => {
    const table = new KeyTable(8, () => undefined, SEED);
    const all = keys(4000);
    // Model: key index -> entry. A fixed pseudo-random walk (no Math.random).
    const model = new Map<number, number>();
    let x = 7;
    for (let step = 0; step < 40_000; step++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const k = x % 4000;
      const held = model.get(k);
      if (held !== undefined && x % 3 === 0) {
        table.remove(held);
        model.delete(k);
      } else {
        const e = table.insert(all, k);
        expect(table.created).toBe(held === undefined);
        if (held !== undefined) expect(e).toBe(held);
        model.set(k, e);
      }
    }
    expect(table.size).toBe(model.size);
    for (let k = 0; k < 4000; k++) expect(table.find(all, k)).toBe(model.get(k) ?? -1);
  });

  it('holds nothing once cleared, and hands entries out from 0 again', () => {
    const table = new KeyTable(8, undefined, SEED);
    const k = keys(4);
    for (let i = 0; i < 4; i++) table.insert(k, i);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.find(k, 0)).toBe(-1);
    expect(table.insert(k, 3)).toBe(0);
  });

  it('reads packed keys as words, copying a misaligned view, and refuses too few bytes', () => {
    const bytes = new Uint8Array(1 + 2 * BINARY_KEY_BYTES);
    bytes.set([1, 0, 0, 0], 1);
    const misaligned = bytes.subarray(1);
    expect(keyWords(misaligned, 2)[0]).toBe(new Int32Array(new Uint8Array([1, 0, 0, 0]).buffer)[0]);
    expect(() => keyWords(misaligned, 3)).toThrow(RangeError);
  });
});
