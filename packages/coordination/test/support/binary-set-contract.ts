import { describe, expect, it } from 'vitest';
import { BINARY_KEY_BYTES, type BinaryExpiringSet, type Coordination } from '../../src/index.js';
import type { CoordinationContractBackend } from './coordination-contract.js';

/** Keys with ids: key i has its first two bytes i (little-endian), the rest fixed. */
export function binaryKeys(...ids: number[]): Uint8Array {
  const bytes = new Uint8Array(ids.length * BINARY_KEY_BYTES);
  ids.forEach((id, i) => {
    bytes.fill(7, i * BINARY_KEY_BYTES, (i + 1) * BINARY_KEY_BYTES);
    bytes[i * BINARY_KEY_BYTES] = id & 0xff;
    bytes[i * BINARY_KEY_BYTES + 1] = (id >> 8) & 0xff;
  });
  return bytes;
}

/** Places for `n` keys: all on `partition`, offsets from `from`. */
export const placesOf = (n: number, partition = 0, from = 0) => ({
  partitions: new Uint32Array(n).fill(partition),
  offsets: Float64Array.from({ length: n }, (_, i) => from + i),
});

/** The ids of `ids` the set holds now. */
export function heldOf(set: BinaryExpiringSet, ids: number[]): number[] {
  const answer = set.getMany(binaryKeys(...ids), ids.length);
  return ids.filter((_, i) => answer.found[i] === 1);
}

/** The binary set `name` of `c`, once it answers. */
export async function readySet(
  c: Coordination,
  name: string,
  maxEntries?: number,
): Promise<BinaryExpiringSet> {
  const set = c.binarySet?.(name, maxEntries === undefined ? {} : { maxEntries });
  if (set === undefined) throw new Error(`mode ${c.mode} offers no binary set`);
  await set.ready();
  return set;
}

/**
 * What every binary expiring set must do alike (mode 1, the fake, etcd):
 * the assertions binary-set.test.ts makes of mode 1's table, through the
 * coordination's interface. Time passes through the fixture.
 */
export function describeBinarySetContract(
  name: string,
  backend: CoordinationContractBackend,
): void {
  const ttl = backend.ttlMs;

  describe(`Binary set contract: ${name}`, () => {
    it('answers the place each key was added with, and nothing for others', async () => {
      const { coordination: c } = await backend.fresh();
      const set = await readySet(c, 'seen');
      set.addMany(binaryKeys(1, 2), 2, ttl * 30, placesOf(2, 3, 40));
      const answer = set.getMany(binaryKeys(2, 9, 1), 3);
      expect([...answer.found]).toEqual([1, 0, 1]);
      expect([...answer.partitions]).toEqual([3, 0, 3]);
      expect([...answer.offsets]).toEqual([41, 0, 40]);
      expect(set.size()).toBe(2);
      await set.flushed();
      await c.close();
    });

    it('reads a key as absent once its TTL passed', async () => {
      const fx = await backend.fresh();
      const set = await readySet(fx.coordination, 'seen');
      set.addMany(binaryKeys(1), 1, ttl, placesOf(1));
      set.addMany(binaryKeys(2), 1, ttl * 30, placesOf(1));
      expect(heldOf(set, [1, 2])).toEqual([1, 2]);
      await fx.after(
        ttl,
        async () => heldOf(set, [1, 2]).join() === '2',
        'key 1 expiring, key 2 held',
      );
      await set.flushed();
      await fx.coordination.close();
    });

    it('evicts the oldest add beyond maxEntries; a re-add makes a key the newest', async () => {
      const { coordination: c } = await backend.fresh();
      const set = await readySet(c, 'bounded', 3);
      set.addMany(binaryKeys(1, 2, 3), 3, ttl * 30, placesOf(3));
      // 1 again: its place is replaced and it moves behind 2 and 3.
      set.addMany(binaryKeys(1), 1, ttl * 30, placesOf(1, 5, 77));
      set.addMany(binaryKeys(4), 1, ttl * 30, placesOf(1));
      expect(heldOf(set, [1, 2, 3, 4])).toEqual([1, 3, 4]);
      expect(set.getMany(binaryKeys(1), 1).offsets[0]).toBe(77);
      set.addMany(binaryKeys(5, 6), 2, ttl * 30, placesOf(2));
      expect(heldOf(set, [1, 2, 3, 4, 5, 6])).toEqual([4, 5, 6]);
      expect(set.size()).toBe(3);
      await set.flushed();
      await c.close();
    });

    it('claims: a held key answers its place, a new one is added with the given place, also for a later copy in the call', async () => {
      const { coordination: c } = await backend.fresh();
      const set = await readySet(c, 'claimed');
      set.addMany(binaryKeys(1), 1, ttl * 30, placesOf(1, 9, 50));
      const answer = set.claimMany(binaryKeys(1, 2, 2, 3), 4, ttl * 30, placesOf(4, 0, 10));
      expect([...answer.found]).toEqual([1, 0, 1, 0]);
      expect([...answer.partitions]).toEqual([9, 0, 0, 0]);
      expect([...answer.offsets]).toEqual([50, 11, 11, 13]);
      expect(set.size()).toBe(3);
      await set.flushed();
      await c.close();
    });

    it('claims afresh a key whose TTL passed', async () => {
      const fx = await backend.fresh();
      const set = await readySet(fx.coordination, 'reclaimed');
      set.claimMany(binaryKeys(1), 1, ttl, placesOf(1, 2, 5));
      let later = set.claimMany(binaryKeys(1), 1, ttl, placesOf(1, 2, 7));
      expect([...later.offsets]).toEqual([5]);
      await fx.after(
        ttl,
        async () =>
          (later = set.claimMany(binaryKeys(1), 1, ttl, placesOf(1, 2, 7))).found[0] === 0,
        'key 1 claimed afresh once expired',
      );
      expect([...later.offsets]).toEqual([7]);
      await set.flushed();
      await fx.coordination.close();
    });

    it('claims within maxEntries, evicting the oldest', async () => {
      const { coordination: c } = await backend.fresh();
      const set = await readySet(c, 'bounded-claims', 2);
      set.addMany(binaryKeys(1, 2), 2, ttl * 30, placesOf(2));
      set.claimMany(binaryKeys(2, 3), 2, ttl * 30, placesOf(2));
      expect(heldOf(set, [1, 2, 3])).toEqual([2, 3]);
      await set.flushed();
      await c.close();
    });

    it('is a set of its own: not the string set of its name, nor another binary set', async () => {
      const { coordination: c } = await backend.fresh();
      const set = await readySet(c, 'named');
      set.addMany(binaryKeys(1), 1, ttl * 30, placesOf(1));
      await c.expiringSet('named').addMany(['x'], ttl * 30);
      expect(set.size()).toBe(1);
      expect(heldOf(await readySet(c, 'other'), [1])).toEqual([]);
      expect(await c.expiringSet('named').size()).toBe(1);
      await set.flushed();
      await c.close();
    });

    it('refuses bad input naming the field, and answers nothing once closed', async () => {
      const { coordination: c } = await backend.fresh();
      const set = await readySet(c, 'checked');
      const at = (...offsets: number[]) => ({
        partitions: new Uint32Array(offsets.length),
        offsets: Float64Array.from(offsets),
      });
      expect(() => set.getMany(binaryKeys(1), 2)).toThrow(
        expect.objectContaining({ code: 'TWG_COORDINATION_INVALID', field: 'keys' }),
      );
      expect(() => set.addMany(binaryKeys(1), 1, 0, at(0))).toThrow(
        expect.objectContaining({ code: 'TWG_COORDINATION_INVALID', field: 'ttlMs' }),
      );
      expect(() => set.addMany(binaryKeys(1), 1, ttl, at(-1))).toThrow(
        expect.objectContaining({ field: 'places.offsets[0]' }),
      );
      expect(() => set.claimMany(binaryKeys(1), 1, ttl, at(0.5))).toThrow(
        expect.objectContaining({ field: 'places.offsets[0]' }),
      );
      expect(set.size()).toBe(0);
      expect([...set.claimMany(binaryKeys(1, 1), 2, ttl, at(4, 5)).offsets]).toEqual([4, 4]);
      await set.flushed();
      await c.close();
      expect(() => set.claimMany(binaryKeys(2), 1, ttl, at(0))).toThrow(
        expect.objectContaining({ code: 'TWG_COORDINATION_CLOSED' }),
      );
      expect(() => set.getMany(binaryKeys(1), 1)).toThrow(
        expect.objectContaining({ code: 'TWG_COORDINATION_CLOSED' }),
      );
      await expect(set.ready()).rejects.toMatchObject({ code: 'TWG_COORDINATION_CLOSED' });
    });
  });
}
