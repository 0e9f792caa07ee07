import { etcd, uniqueName, waitFor } from '@thalweg/test-services';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { coordination, type Coordination } from '../src/index.js';
import { encodePiece, MAX_PIECE_KEYS } from '../src/etcd/binary-piece.js';
import {
  binaryKeys,
  describeBinarySetContract,
  heldOf,
  placesOf,
  readySet,
} from './support/binary-set-contract.js';
import { etcdFixture } from './support/etcd-fixture.js';

// etcd's TTLs are whole seconds (see etcd-coordination.int.test.ts): 2 s.
describeBinarySetContract('mode 3 (etcd)', { ttlMs: 2000, fresh: etcdFixture });

/** Two coordinations on one namespace: two processes sharing the sets. */
const onNamespace = (namespace: string): Promise<Coordination> =>
  coordination({
    mode: 3,
    endpoints: etcd().endpoints,
    namespace,
    callTimeoutMs: 3000,
    healthIntervalMs: 100,
  });

const raw = new Etcd3({ hosts: etcd().endpoints });
afterAll(() => {
  raw.close();
});

const MINUTE = 60_000;

describe('the etcd binary set across processes', () => {
  it("two processes see each other's claims through the watch, and a later one loads them", async () => {
    const namespace = `${uniqueName('twg-bset')}/`;
    const [a, b] = [await onNamespace(namespace), await onNamespace(namespace)];
    const [sa, sb] = [await readySet(a, 'seen'), await readySet(b, 'seen')];
    expect([...sa.claimMany(binaryKeys(1, 2, 3), 3, MINUTE, placesOf(3, 1, 10)).found]).toEqual([
      0, 0, 0,
    ]);
    await waitFor(() => heldOf(sb, [1, 2, 3]).length === 3, 'b seeing a’s claims');
    // b's claim finds a's places; its new key reaches a.
    const answer = sb.claimMany(binaryKeys(2, 4), 2, MINUTE, placesOf(2, 2, 0));
    expect([...answer.found]).toEqual([1, 0]);
    expect([...answer.partitions]).toEqual([1, 2]);
    expect([...answer.offsets]).toEqual([11, 1]);
    await waitFor(() => heldOf(sa, [4]).length === 1, 'a seeing b’s claim');
    expect(sa.getMany(binaryKeys(4), 1).partitions[0]).toBe(2);
    await Promise.all([sa.flushed(), sb.flushed()]);
    // A third process loads the whole prefix on first use.
    const c = await onNamespace(namespace);
    expect(heldOf(await readySet(c, 'seen'), [1, 2, 3, 4, 5])).toEqual([1, 2, 3, 4]);
    // The string set of the same name holds none of it.
    expect(await c.expiringSet('seen').size()).toBe(0);
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('a claim past one piece is written as several etcd keys, and arrives whole', async () => {
    const namespace = `${uniqueName('twg-bset')}/`;
    const [a, b] = [await onNamespace(namespace), await onNamespace(namespace)];
    const [sa, sb] = [await readySet(a, 'big'), await readySet(b, 'big')];
    const n = MAX_PIECE_KEYS + 1000;
    const keys = new Uint8Array(n * 16);
    for (let i = 0; i < n; i++) new DataView(keys.buffer).setUint32(i * 16, i + 1);
    sa.claimMany(keys, n, MINUTE, placesOf(n, 0, 0));
    await sa.flushed();
    const written = await raw.getAll().prefix(`${namespace}bset/big/`).keys();
    expect(written).toHaveLength(2);
    await waitFor(
      () => sb.size() === n,
      () => `b holding ${n} keys (now ${sb.size()})`,
    );
    const seen = sb.getMany(keys, n);
    expect(seen.found.every((f) => f === 1)).toBe(true);
    expect(seen.offsets[n - 1]).toBe(n - 1);
    await Promise.all([a.close(), b.close()]);
  });

  it('ignores a value under its prefix that is not a piece, loaded or watched', async () => {
    const namespace = `${uniqueName('twg-bset')}/`;
    const prefix = `${namespace}bset/seen/`;
    const piece = (version: number) => {
      const v = encodePiece(binaryKeys(9), placesOf(1).partitions, placesOf(1).offsets, 0, 1, 1e15);
      v[4] = version;
      return Buffer.from(v);
    };
    await raw.put(`${prefix}garbage`).value('{"not":"a piece"}');
    await raw.put(`${prefix}v2`).value(piece(2));
    await raw.put(`${prefix}short`).value(piece(1).subarray(0, 30));
    const a = await onNamespace(namespace);
    const sa = await readySet(a, 'seen');
    expect(sa.size()).toBe(0);
    // Watched: garbage again, then a good piece from "another process".
    await raw.put(`${prefix}garbage-2`).value(Buffer.from([0x54, 0x57, 0x42, 0x53, 1, 0, 0]));
    await raw.put(`${prefix}good`).value(piece(1));
    await waitFor(() => heldOf(sa, [9]).length === 1, 'the good piece applied');
    expect(sa.size()).toBe(1);
    sa.claimMany(binaryKeys(1), 1, MINUTE, placesOf(1));
    expect(heldOf(sa, [1, 9])).toEqual([1, 9]);
    await sa.flushed();
    await a.close();
  });

  it('drops writes not started at close, told as unwritten, and leaves no rejection behind', async () => {
    const namespace = `${uniqueName('twg-bset')}/`;
    const a = await onNamespace(namespace);
    const unwritten: { keys: number; code: unknown }[] = [];
    const set = a.binarySet?.('seen', {
      onUnwritten: (keys, error) =>
        unwritten.push({ keys, code: (error as { code?: unknown }).code }),
    });
    if (set === undefined) throw new Error('etcd offers binary sets');
    await set.ready();
    // The first write leaves at once; the next two wait behind it.
    for (let i = 0; i < 3; i++)
      set.claimMany(binaryKeys(10 * i + 1, 10 * i + 2), 2, MINUTE, placesOf(2));
    await a.close();
    expect(unwritten).toEqual([
      { keys: 2, code: 'TWG_COORDINATION_CLOSED' },
      { keys: 2, code: 'TWG_COORDINATION_CLOSED' },
    ]);
    await set.flushed();
    const written = await raw.getAll().prefix(`${namespace}bset/seen/`).keys();
    expect(written).toHaveLength(1);
  });
});
