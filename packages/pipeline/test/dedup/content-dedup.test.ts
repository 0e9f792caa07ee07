import { ConfigError, partitionKey, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import {
  coordination,
  inMemoryCoordination,
  type Coordination,
  type ExpiringSet,
} from '@thalweg/coordination';
import { describe, expect, it } from 'vitest';
import { ContentDedup } from '../../src/dedup/content-dedup.js';
import { dedupConfigSchema } from '../../src/dedup/dedup-config.js';
import type { DedupConfigInput, PipelineConfigInput } from '../../src/index.js';
import { build, keepOpen } from '../doubles/harness.js';
import type { MemoryRow } from '../doubles/memory-sinks.js';
import { makeRecords, MemoryStoreSource } from '../doubles/memory-sources.js';

const ORDERS: DedupConfigInput = {
  key: { fields: ['orderId', 'eventTime'] },
  windowMs: 60_000,
  maxEntries: 10_000,
  declared: { naturalKey: ['orderId'] },
};

/** An order as the producer wrote it; `attempt` differs between its retries (a new payload). */
const order = (n: number, attempt: number) =>
  JSON.stringify({ orderId: `o${n}`, eventTime: 1000 + n, attempt });

type Log = ReturnType<typeof makeRecords>;
const logs = (parts: Record<string, Log>) =>
  new Map(
    Object.entries(parts).map(([key, records]) => {
      const [topic = '', partition = '0'] = key.split('/');
      const p = { topic, partition: Number(partition) };
      return [partitionKey(p), { partition: p, records }];
    }),
  );

/** Partition 0 holds o0..o9; partition 1 holds producer retries of o5..o9, then o10..o14. */
const withRetries = () =>
  logs({
    'orders/0': makeRecords('orders', 0, 10, (o) => order(o, 1)),
    'orders/1': makeRecords('orders', 1, 10, (o) => order(o + 5, 2)),
  });

const orderIds = (rows: Iterable<MemoryRow>) =>
  [...rows].map((r) => (JSON.parse(r.text) as { orderId: string }).orderId).sort();

const config = (dedup: PipelineConfigInput['dedup']): PipelineConfigInput => ({ dedup });

describe('content dedup in the pipeline', () => {
  it('drops upstream duplicates at other offsets and partitions from the secondaries; raw keeps all', async () => {
    const table = new Map<string, MemoryRow>();
    const built = await build(new MemoryStoreSource(withRetries(), 3), {
      secondaries: 1,
      tables: [table],
      coordination: inMemoryCoordination(),
      config: config({ orders: ORDERS }),
    });
    const stats = await built.pipeline.run();
    expect(stats.raw.durableRecords).toBe(20);
    expect([...built.raw.stored.values()].reduce((n, p) => n + p.size, 0)).toBe(20);
    expect(orderIds(table.values())).toEqual(Array.from({ length: 15 }, (_, i) => `o${i}`).sort());
    expect(stats.dedup).toEqual([
      { stream: 'orders', checked: 20, dropped: 5, skipped: 0, unhashable: 0, duplicateRate: 0.25 },
    ]);
    // The dropped records' offsets are covered: no gap is left for recovery.
    for (const partition of [0, 1]) {
      const covered = await built.coverage.covered({
        sink: 'sec0' as never,
        topic: 'orders',
        partition,
      });
      expect(covered.ranges()).toEqual([{ start: 0, end: 10 }]);
    }
  });

  it('refuses a stream whose contract declares neither a natural key nor uniqueness', async () => {
    const undeclared = { ...ORDERS, declared: undefined };
    const open = build(new MemoryStoreSource(withRetries(), 3), {
      secondaries: 1,
      coordination: inMemoryCoordination(),
      config: config({ orders: { ...undeclared, key: 'payload' } }),
    });
    await expect(open).rejects.toBeInstanceOf(ConfigError);
    await expect(open).rejects.toThrow(/declared.*identical payloads.*loss caused by dedup/s);
  });

  it('refuses hashes that could merge distinct records, and mode 0 or no coordination', async () => {
    const merging = dedupConfigSchema.safeParse({ ...ORDERS, key: { fields: ['eventTime'] } });
    expect(merging.error?.issues[0]?.path).toEqual(['key', 'fields']);
    expect(merging.error?.issues[0]?.message).toMatch(/orderId/);
    expect(
      dedupConfigSchema.safeParse({ ...ORDERS, declared: { unique: true } }).error?.issues[0],
    ).toMatchObject({ path: ['key'] });
    const parsed = dedupConfigSchema.parse(ORDERS);
    const quiet = () => undefined;
    expect(() => new ContentDedup({ orders: parsed }, undefined, quiet)).toThrow(/coordination/);
    const off = await coordination({ mode: 0 });
    expect(() => new ContentDedup({ orders: parsed }, off, quiet)).toThrow(
      expect.objectContaining({ path: 'coordination.mode' }) as Error,
    );
  });

  it('never drops distinct records with identical payloads on a stream without dedup', async () => {
    const table = new Map<string, MemoryRow>();
    const beat = () => JSON.stringify({ heartbeat: true });
    const built = await build(
      new MemoryStoreSource(
        logs({
          'orders/0': makeRecords('orders', 0, 4, (o) => order(o % 2, 1)),
          'beats/0': makeRecords('beats', 0, 6, beat),
        }),
        2,
      ),
      {
        secondaries: 1,
        tables: [table],
        coordination: inMemoryCoordination(),
        config: config({ orders: ORDERS }),
      },
    );
    const stats = await built.pipeline.run();
    const beats = [...table.values()].filter((r) => r.text === beat());
    expect(beats).toHaveLength(6);
    expect(stats.dedup.map((d) => d.stream)).toEqual(['orders']);
    expect(stats.dedup[0]?.dropped).toBe(2);
  });

  it('goes on with dedup off when the set fails: everything delivered, the skip counted and logged', async () => {
    const table = new Map<string, MemoryRow>();
    const built = await build(new MemoryStoreSource(withRetries(), 5), {
      secondaries: 1,
      tables: [table],
      coordination: failing(inMemoryCoordination()),
      config: config({ orders: ORDERS }),
    });
    const stats = await built.pipeline.run();
    expect(stats.raw.durableRecords).toBe(20);
    expect(table.size).toBe(20);
    expect(stats.dedup[0]).toMatchObject({ checked: 0, dropped: 0, skipped: 20 });
    expect(built.log.some((l) => /seen-set is unavailable.*dedup off/.test(l))).toBe(true);
  });

  it('replays first occurrences from raw in recovery and drops their duplicates there too', async () => {
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const table = new Map<string, MemoryRow>();
    const shared = inMemoryCoordination();
    const store = keepOpen(new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('sec0')] }));
    const ingest = await build(new MemoryStoreSource(withRetries(), 2), {
      coverage: store,
      rawHeld,
      tables: [table],
      secondaries: 1,
      secondary: (s) => (s.failAfter = 0),
      coordination: shared,
      config: { ...config({ orders: ORDERS }), recovery: { role: 'ingest' } },
    });
    const first = await ingest.pipeline.run();
    expect(first.secondaries[0]?.state).toBe('failed');
    expect(table.size).toBe(0);
    const recovery = await build(new MemoryStoreSource(withRetries(), 2), {
      coverage: store,
      rawHeld,
      tables: [table],
      secondaries: 1,
      coordination: shared,
      config: { ...config({ orders: ORDERS }), recovery: { role: 'recovery', windowRecords: 4 } },
    });
    const stats = await recovery.pipeline.run({ untilCaughtUp: true });
    // The set holds each first occurrence's record id: its replay is delivered, not taken for a duplicate.
    expect(orderIds(table.values())).toEqual(Array.from({ length: 15 }, (_, i) => `o${i}`).sort());
    expect(stats.dedup[0]).toMatchObject({ checked: 20, dropped: 5 });
  });
});

describe('ContentDedup', () => {
  const parsed = dedupConfigSchema.parse(ORDERS);
  const batch = (
    partition: number,
    offsets: number[],
    value: (o: number) => string,
  ): SourceBatch => {
    const records = makeRecords('orders', partition, Math.max(...offsets) + 1, value).filter((r) =>
      offsets.includes(r.offset),
    );
    return {
      span: { topic: 'orders', partition, start: offsets[0] ?? 0, end: (offsets.at(-1) ?? 0) + 1 },
      records,
    };
  };

  it('removes duplicates inside a batch locally and makes one bulk lookup and one bulk write', async () => {
    const calls = { get: 0, add: 0 };
    const dedup = new ContentDedup(
      { orders: parsed },
      counting(inMemoryCoordination(), calls),
      () => undefined,
    );
    const out = await dedup.filter(batch(0, [0, 1, 2, 3, 4, 5], (o) => order(o % 3, o)));
    expect(out.records.map((r) => r.offset)).toEqual([0, 1, 2]);
    expect(out.span).toMatchObject({ start: 0, end: 6 });
    expect(calls).toEqual({ get: 1, add: 1 });
  });

  it('delivers a replay of the first occurrence (same record id), drops a retry at another offset', async () => {
    const dedup = new ContentDedup({ orders: parsed }, inMemoryCoordination(), () => undefined);
    const first = batch(0, [0, 1], (o) => order(o, 1));
    expect((await dedup.filter(first)).records).toHaveLength(2);
    // A redelivery at the same offsets: the same record ids.
    expect((await dedup.filter(first)).records).toHaveLength(2);
    // The producer's retry at new offsets of another partition: other record ids.
    expect((await dedup.filter(batch(1, [7, 8], (o) => order(o - 7, 2)))).records).toHaveLength(0);
    expect(dedup.stats()[0]).toMatchObject({ checked: 6, dropped: 2 });
  });

  it('decides pieces in call order while their lookups overlap, and a lookup ahead of a write still sees it', async () => {
    // Every write is held until released: the second piece's lookup leaves
    // and is answered while the first piece's write is still in flight.
    const held: (() => void)[] = [];
    const gets: number[] = [];
    let bothLookedUp = (): void => undefined;
    const lookedUp = new Promise<void>((resolve) => (bothLookedUp = resolve));
    const slow = wrapSets(inMemoryCoordination(), (set) => ({
      ...set,
      getMany: (keys) => {
        gets.push(keys.length);
        if (gets.length === 2) bothLookedUp();
        return set.getMany(keys);
      },
      addMany: (keys, ttl, values) =>
        new Promise<void>((resolve, reject) => {
          held.push(() => {
            set.addMany(keys, ttl, values).then(resolve, reject);
          });
        }),
    }));
    const dedup = new ContentDedup({ orders: parsed }, slow, () => undefined);
    const order1 = dedup.filter(batch(0, [0, 1], (o) => order(o, 1)));
    const retry = dedup.filter(batch(1, [4, 5], (o) => order(o - 4, 2)));
    // Both lookups leave while the first piece's write is still held.
    await lookedUp;
    expect(gets).toEqual([2, 2]);
    const decided: string[] = [];
    void order1.then(() => decided.push('first'));
    void retry.then(() => decided.push('retry'));
    expect((await order1).records).toHaveLength(2);
    expect((await retry).records).toHaveLength(0);
    expect(decided).toEqual(['first', 'retry']);
    for (const release of held) release();
    await dedup.settled();
    // Written now: a later piece's lookup finds them in the set itself.
    expect((await dedup.filter(batch(2, [9], () => order(1, 3)))).records).toHaveLength(0);
    expect(dedup.stats()[0]).toMatchObject({ checked: 5, dropped: 3, skipped: 0 });
  });

  it('never drops a record whose declared fields cannot be read', async () => {
    const dedup = new ContentDedup({ orders: parsed }, inMemoryCoordination(), () => undefined);
    const out = await dedup.filter(batch(0, [0, 1, 2], () => 'not json'));
    expect(out.records).toHaveLength(3);
    expect(dedup.stats()[0]).toMatchObject({ checked: 0, unhashable: 3 });
  });
});

/** The coordination with every call of its expiring sets failing, as etcd without quorum. */
function failing(c: Coordination): Coordination {
  const down = () => Promise.reject(new Error('TWG_COORDINATION_UNAVAILABLE (test)'));
  return wrapSets(c, () => ({ hasMany: down, getMany: down, addMany: down, size: down }));
}

function counting(c: Coordination, calls: { get: number; add: number }): Coordination {
  return wrapSets(c, (set) => ({
    ...set,
    getMany: (keys) => {
      calls.get += 1;
      return set.getMany(keys);
    },
    addMany: (keys, ttl, values) => {
      calls.add += 1;
      return set.addMany(keys, ttl, values);
    },
  }));
}

function wrapSets(c: Coordination, wrap: (set: ExpiringSet) => ExpiringSet): Coordination {
  return {
    ...c,
    mode: c.mode,
    health: () => c.health(),
    close: () => c.close(),
    expiringSet: (name, options) => wrap(c.expiringSet(name, options)),
  };
}
