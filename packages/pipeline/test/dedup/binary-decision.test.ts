import type { SourceBatch } from '@thalweg/connector-core';
import {
  BINARY_KEY_BYTES,
  CoordinationError,
  inMemoryCoordination,
  type BinarySetOptions,
  type Coordination,
} from '@thalweg/coordination';
import { describe, expect, it } from 'vitest';
import { BinaryDecision } from '../../src/dedup/binary-decision.js';
import { packValues } from '@thalweg/connector-core';
import { CONTENT_HASH_BYTES, hashPacked } from '../../src/dedup/content-hash.js';
import { ContentDedup } from '../../src/dedup/content-dedup.js';
import { dedupConfigSchema } from '../../src/dedup/dedup-config.js';
import { makeRecords } from '../doubles/memory-sources.js';

const config = dedupConfigSchema.parse({
  key: { fields: ['orderId'] },
  windowMs: 60_000,
  maxEntries: 10_000,
  declared: { naturalKey: ['orderId'] },
});

/** A piece of `partition` at `start`, record i holding order `orders[i]` (null: not JSON). */
function piece(partition: number, start: number, orders: (number | null)[]): SourceBatch {
  const records = makeRecords('orders', partition, start + orders.length, (o) => {
    const n = orders[o - start];
    return n === null || n === undefined ? 'not json' : JSON.stringify({ orderId: `o${n}`, at: o });
  }).slice(start);
  return { span: { topic: 'orders', partition, start, end: start + orders.length }, records };
}

const offsets = (b: SourceBatch) => b.records.map((r) => r.offset);

function decide(d: BinaryDecision, b: SourceBatch) {
  return d.decide(b, hashPacked(config.key, packValues(b.records)));
}

describe('BinaryDecision', () => {
  it('keeps the earliest record of a new hash and drops its later copies in the piece, in one claim', () => {
    const set = inMemoryCoordination().binarySet?.('s');
    if (set === undefined) throw new Error('the fake offers binary sets');
    // One call to the set per piece: its lookup and its write are the same claim.
    let claims = 0;
    const claimMany = set.claimMany.bind(set);
    set.claimMany = (...args) => {
      claims += 1;
      return claimMany(...args);
    };
    const d = new BinaryDecision(set, 60_000);
    const out = decide(d, piece(0, 10, [1, 2, 1, null, 2, 1, 3]));
    expect(offsets({ ...piece(0, 0, []), records: out.records })).toEqual([10, 11, 13, 16]);
    expect(out).toMatchObject({ dropped: 3, remembered: 3 });
    expect(claims).toBe(1);
    expect(CONTENT_HASH_BYTES).toBe(BINARY_KEY_BYTES);
    expect(set.size()).toBe(3);
  });

  it('delivers the first occurrence again at its own place, drops its copies elsewhere', () => {
    const set = inMemoryCoordination().binarySet?.('s');
    if (set === undefined) throw new Error('the fake offers binary sets');
    const d = new BinaryDecision(set, 60_000);
    const first = piece(0, 0, [1, 2]);
    expect(decide(d, first).dropped).toBe(0);
    // Its replay: the same records at the same places, each kept.
    expect(decide(d, first)).toMatchObject({ dropped: 0, remembered: 0 });
    // A retry on partition 1 at the same offsets is another place.
    expect(offsets({ ...first, records: decide(d, piece(1, 0, [1, 2, 4])).records })).toEqual([2]);
    // A piece holding the replay of offset 1 beside a copy at offset 3 keeps the replay.
    const mixed = decide(d, piece(0, 1, [2, 5, 2]));
    expect(mixed.records.map((r) => r.offset)).toEqual([1, 2]);
  });

  it('reports the set failing the lookup by throwing, deciding nothing', async () => {
    const c = inMemoryCoordination();
    const set = c.binarySet?.('s');
    if (set === undefined) throw new Error('the fake offers binary sets');
    await c.close();
    expect(() => decide(new BinaryDecision(set, 60_000), piece(0, 0, [1]))).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_CLOSED' }),
    );
  });
});

describe('ContentDedup on a binary set', () => {
  /** The same coordination without its binary sets: ContentDedup takes the string path. */
  const stringsOnly = (c: Coordination): Coordination => ({
    mode: c.mode,
    leases: c.leases,
    election: c.election,
    membership: c.membership,
    counters: c.counters,
    expiringSet: (name, options) => c.expiringSet(name, options),
    health: () => c.health(),
    close: () => c.close(),
  });

  it('decides exactly as the string path, piece after piece', async () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const pieces: SourceBatch[] = [];
    const next = [0, 0, 0];
    for (let i = 0; i < 60; i++) {
      const p = random(3);
      const orders = Array.from({ length: 1 + random(40) }, () =>
        random(25) === 0 ? null : random(300),
      );
      const start = next[p] ?? 0;
      next[p] = start + orders.length;
      pieces.push(piece(p, start, orders));
      // Now and then a redelivery of a piece already seen.
      if (random(6) === 0) pieces.push(pieces[random(pieces.length)] ?? piece(0, 0, []));
    }
    const binary = new ContentDedup({ orders: config }, inMemoryCoordination(), () => undefined);
    const strings = new ContentDedup(
      { orders: config },
      stringsOnly(inMemoryCoordination()),
      () => undefined,
    );
    const a = await Promise.all(pieces.map((b) => binary.filter(b)));
    const b = await Promise.all(pieces.map((x) => strings.filter(x)));
    expect(a.map(offsets)).toEqual(b.map(offsets));
    expect(binary.stats()).toEqual(strings.stats());
    expect(binary.stats()[0]?.dropped).toBeGreaterThan(0);
    await binary.settled();
    await strings.settled();
  });

  it('passes a piece with dedup off when the set is closed, counting it skipped', async () => {
    const c = inMemoryCoordination();
    const lines: string[] = [];
    const dedup = new ContentDedup({ orders: config }, c, (l) => lines.push(l));
    await c.close();
    const out = await dedup.filter(piece(0, 0, [1, 1, null]));
    expect(out.records).toHaveLength(3);
    expect(dedup.stats()[0]).toMatchObject({ checked: 0, skipped: 2, unhashable: 1 });
    expect(lines.join('\n')).toMatch(/unavailable/);
    await dedup.settled();
  });

  /**
   * The fake's binary sets failing as etcd's does without quorum (throwing
   * TWG_COORDINATION_UNAVAILABLE at once) while `state.down`, and telling
   * `state.told` how to report a write that never reached the others.
   */
  function flaky(state: { down: boolean; told?: BinarySetOptions['onUnwritten'] }): Coordination {
    const c = inMemoryCoordination();
    const guard = () => {
      if (state.down)
        throw new CoordinationError('TWG_COORDINATION_UNAVAILABLE', 'etcd: no quorum (test)');
    };
    return {
      ...stringsOnly(c),
      binarySet: (name, options) => {
        const set = c.binarySet?.(name, options);
        if (set === undefined) throw new Error('the fake offers binary sets');
        state.told = options?.onUnwritten;
        return {
          ...set,
          getMany: (keys, count) => (guard(), set.getMany(keys, count)),
          claimMany: (keys, count, ttlMs, places) => {
            guard();
            return set.claimMany(keys, count, ttlMs, places);
          },
        };
      },
    };
  }

  it('goes on with dedup off while the set throws UNAVAILABLE, counted and logged, and resumes once it answers', async () => {
    const state: Parameters<typeof flaky>[0] = { down: true };
    const lines: string[] = [];
    const dedup = new ContentDedup({ orders: config }, flaky(state), (l) => lines.push(l));
    const first = await dedup.filter(piece(0, 0, [1, 1, 2]));
    expect(offsets(first)).toEqual([0, 1, 2]);
    expect(dedup.stats()[0]).toMatchObject({ checked: 0, dropped: 0, skipped: 3 });
    expect(lines.join('\n')).toMatch(
      /seen-set is unavailable; 3 records go on with dedup off.*no quorum/,
    );
    state.down = false;
    const next = await dedup.filter(piece(1, 0, [1, 1, 3]));
    expect(offsets(next)).toEqual([0, 2]);
    expect(dedup.stats()[0]).toMatchObject({ checked: 3, dropped: 1, skipped: 3 });
    await dedup.settled();
  });

  it('counts and logs the new hashes a set could not write for the other processes', async () => {
    const state: Parameters<typeof flaky>[0] = { down: false };
    const lines: string[] = [];
    const dedup = new ContentDedup({ orders: config }, flaky(state), (l) => lines.push(l));
    await dedup.filter(piece(0, 0, [1, 2]));
    state.told?.(2, new Error('etcd: writing 2 keys failed (test)'));
    expect(dedup.stats()[0]).toMatchObject({ checked: 2, skipped: 2 });
    expect(lines.join('\n')).toMatch(/2 new hashes not remembered.*writing 2 keys failed/);
    await dedup.settled();
  });
});
