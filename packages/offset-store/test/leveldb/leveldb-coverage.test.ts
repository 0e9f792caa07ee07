import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LevelDbCoverage } from '../../src/leveldb/leveldb-coverage.js';
import { RangeSet } from '../../src/range-set.js';
import { A, describeCoverageContract, receipt } from '../contract/coverage-contract.js';

const dirs: string[] = [];
async function location(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-leveldb-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describeCoverageContract('LevelDB local tier', {
  persistent: true,
  propertyRuns: 30,
  fresh: async (sinks) => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks });
    return {
      store,
      reopen: async () => {
        await store.close();
        return LevelDbCoverage.open({ location: at, sinks });
      },
    };
  },
});

describe('LevelDB local tier', () => {
  it('stores one key per range and merges adjacent ranges into one entry', async () => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10), receipt(A, 20, 30)]);
    await store.recordDurable([receipt(A, 10, 20)]);
    const d = await store.diagnostics();
    expect(d.destinations).toEqual([
      { key: { sink: A, topic: 'orders', partition: 0 }, ranges: 1, offsets: 30, innerGaps: [] },
    ]);
    await store.close();
    // The raw key count proves the merge wrote one entry and deleted the others.
    const { ClassicLevel } = await import('classic-level');
    const db = new ClassicLevel<Buffer, Buffer>(at, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
    });
    let ranges = 0;
    for await (const k of db.keys()) if (k[0] === 0x01) ranges += 1;
    await db.close();
    expect(ranges).toBe(1);
  });

  it('logs what the durable tier lacks until it is checkpointed, and reports drift', async () => {
    const store = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    store.serveAsLocalTier();
    await store.recordDurable([receipt(A, 0, 10)]);
    await store.recordDurable([receipt(A, 20, 30)]);
    await store.saveCursor(
      { source: 'f', topic: 't', partition: 0 },
      { kind: 'page', cursor: 'c', watermark: null, nextOffset: 3 },
    );
    const pending = await store.unflushed();
    expect(pending.deltas.flatMap((d) => d.ranges)).toEqual([
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ]);
    expect(pending.cursors).toHaveLength(1);
    expect((await store.diagnostics()).unflushedEntries).toBe(3);
    expect((await store.diagnostics()).destinations[0]?.innerGaps).toEqual([
      { start: 10, end: 20 },
    ]);

    await store.recordDurable([receipt(A, 40, 50)]);
    await store.markCheckpointed(pending.throughSeq, 1234);
    const left = await store.unflushed();
    expect(left.deltas.flatMap((d) => d.ranges)).toEqual([{ start: 40, end: 50 }]);
    expect((await store.diagnostics()).lastCheckpointAt).toBe(1234);
    await store.close();
  });

  it('refuses a second process (or opener) of the same directory', async () => {
    const at = await location();
    const first = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await expect(LevelDbCoverage.open({ location: at, sinks: [A] })).rejects.toMatchObject({
      code: 'TWG_COVERAGE_BACKEND',
    });
    await first.close();
  });

  it('serialises concurrent merges so none is lost in memory or on disk', async () => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.recordDurable([receipt(A, i * 2, i * 2 + 1)])),
    );
    expect((await store.covered({ sink: A, topic: 'orders', partition: 0 })).rangeCount).toBe(50);
    await store.close();
    const again = await LevelDbCoverage.open({ location: at, sinks: [A] });
    expect((await again.covered({ sink: A, topic: 'orders', partition: 0 })).offsetCount).toBe(50);
    await again.close();
  });

  it('changes nothing, on disk or in memory, when the batch write fails', async () => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
    store.serveAsLocalTier();
    await store.recordDurable([receipt(A, 0, 10)]);
    // Fail the next batch of the real database once.
    const db = (store as unknown as { db: { batch: (ops: unknown) => Promise<void> } }).db;
    const batch = db.batch.bind(db);
    let failures = 1;
    db.batch = async (ops) => {
      if (failures-- > 0) throw new Error('injected: disk full');
      await batch(ops);
    };
    await expect(
      store.recordDurable([receipt(A, 10, 20), receipt(A, 40, 50)]),
    ).rejects.toMatchObject({
      code: 'TWG_COVERAGE_BACKEND',
    });
    expect((await store.covered({ sink: A, topic: 'orders', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 10 },
    ]);
    expect((await store.unflushed()).deltas).toHaveLength(1);
    await store.recordDurable([receipt(A, 10, 20)]);
    expect((await store.covered({ sink: A, topic: 'orders', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 20 },
    ]);
    await store.close();
  });

  it('never lets a second topic spelling overwrite a recorded range (lone surrogates are refused)', async () => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10, 'orders\uFFFD')]);
    // 'orders\uD800' encodes to the same UTF-8 key bytes as 'orders\uFFFD':
    // accepted, its [0, 5) was put over the stored [0, 10).
    await store.recordDurable([receipt(A, 0, 5, 'orders\uD800')]).catch(() => undefined);
    await store.close();
    const again = await LevelDbCoverage.open({ location: at, sinks: [A] });
    expect(
      (await again.covered({ sink: A, topic: 'orders\uFFFD', partition: 0 })).ranges(),
    ).toEqual([{ start: 0, end: 10 }]);
    await again.close();
  });

  it('shows a concurrent reader nothing of a merge whose batch then fails', async () => {
    const store = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    await store.recordDurable([receipt(A, 0, 10)]);
    const db = (store as unknown as { db: { batch: (ops: unknown) => Promise<void> } }).db;
    const batch = db.batch.bind(db);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let failures = 1;
    let inFlight = (): void => undefined;
    const reached = new Promise<void>((resolve) => (inFlight = resolve));
    db.batch = async (ops) => {
      if (failures-- > 0) {
        inFlight();
        await held;
        throw new Error('injected: disk full');
      }
      await batch(ops);
    };
    const key = { sink: A, topic: 'orders', partition: 0 };
    const failing = store.recordDurable([receipt(A, 10, 20), receipt(A, 5, 8, 'orders', 1)]);
    // Observed from now on; awaited below.
    failing.catch(() => undefined);
    await reached;
    // Asked while the batch is in flight, answered once it has failed.
    const reading = Promise.all([store.covered(key), store.destinations()]);
    release();
    await expect(failing).rejects.toMatchObject({ code: 'TWG_COVERAGE_BACKEND' });
    const [covered, destinations] = await reading;
    expect(covered.ranges()).toEqual([{ start: 0, end: 10 }]);
    expect(destinations.map((k) => k.partition)).toEqual([0]);
    expect((await store.covered(key)).ranges()).toEqual([{ start: 0, end: 10 }]);
    await store.close();
  });

  it('records a retried receipt after a failed batch even when the disk cannot be re-read', async () => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
    store.serveAsLocalTier();
    await store.recordDurable([receipt(A, 0, 10)]);
    await store.markCheckpointed((await store.unflushed()).throughSeq, 1);
    const db = (
      store as unknown as {
        db: { batch: (ops: unknown) => Promise<void>; iterator: (o: unknown) => unknown };
      }
    ).db;
    const batch = db.batch.bind(db);
    const iterator = db.iterator.bind(db);
    // The failed write is followed by a moment in which the disk cannot be read either.
    let failures = 1;
    let unreadable = false;
    db.batch = async (ops) => {
      if (failures-- > 0) {
        unreadable = true;
        throw new Error('injected: disk full');
      }
      await batch(ops);
    };
    db.iterator = (o) => {
      if (unreadable) throw new Error('injected: read error');
      return iterator(o);
    };
    await expect(store.recordDurable([receipt(A, 10, 20)])).rejects.toThrow();
    unreadable = false;
    // The caller retries; this time the write must really happen.
    await store.recordDurable([receipt(A, 10, 20)]);
    expect((await store.unflushed()).deltas.flatMap((d) => d.ranges)).toEqual([
      { start: 0, end: 20 },
    ]);
    await store.close();
    const again = await LevelDbCoverage.open({ location: at, sinks: [A] });
    expect((await again.covered({ sink: A, topic: 'orders', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 20 },
    ]);
    await again.close();
  });

  it('keeps memory equal to disk when random batches fail (property)', async () => {
    const range = fc
      .tuple(fc.nat(80), fc.integer({ min: 1, max: 12 }))
      .map(([start, n]) => ({ start, end: start + n }));
    const call = fc.record({
      fail: fc.boolean(),
      deltas: fc.array(
        fc.record({
          partition: fc.constantFrom(0, 1),
          ranges: fc.array(range, { minLength: 1, maxLength: 5 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 10 }), async (calls) => {
        const at = await location();
        const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
        const db = (store as unknown as { db: { batch: (ops: unknown) => Promise<void> } }).db;
        const batch = db.batch.bind(db);
        let fail = false;
        db.batch = async (ops) => {
          if (fail) throw new Error('injected');
          await batch(ops);
        };
        const truth = [new RangeSet(), new RangeSet()];
        for (const c of calls) {
          fail = c.fail;
          const done = await store
            .merge(
              c.deltas.map((d) => ({
                key: { sink: A, topic: 'orders', partition: d.partition },
                ranges: d.ranges,
              })),
            )
            .then(() => true)
            .catch(() => false);
          if (done) for (const d of c.deltas) truth[d.partition]!.addAll(d.ranges);
        }
        const key = (partition: number) => ({ sink: A, topic: 'orders', partition });
        for (const p of [0, 1])
          expect((await store.covered(key(p))).ranges()).toEqual(truth[p]!.ranges());
        await store.close();
        const again = await LevelDbCoverage.open({ location: at, sinks: [A] });
        for (const p of [0, 1])
          expect((await again.covered(key(p))).ranges()).toEqual(truth[p]!.ranges());
        await again.close();
      }),
      { numRuns: 60 },
    );
  });
});

describe('LevelDB as the only tier', () => {
  /** Every key of the database by kind: what the store's size is on disk. */
  async function keyCounts(at: string): Promise<{ ranges: number; log: number; other: number }> {
    const { ClassicLevel } = await import('classic-level');
    const db = new ClassicLevel<Buffer, Buffer>(at, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
    });
    const counts = { ranges: 0, log: 0, other: 0 };
    for await (const k of db.keys()) {
      if (k[0] === 0x01) counts.ranges += 1;
      else if (k[0] === 0x02) counts.log += 1;
      else counts.other += 1;
    }
    await db.close();
    return counts;
  }

  it('keeps no log however many merges and cursors it takes, and says it is the durable tier', async () => {
    const at = await location();
    const store = await LevelDbCoverage.open({ location: at, sinks: [A] });
    for (let i = 0; i < 500; i++) {
      await store.recordDurable([receipt(A, i * 10, i * 10 + 10)]);
      await store.saveCursor(
        { source: 'f', topic: 'orders', partition: 0 },
        { kind: 'log-offset', nextOffset: i * 10 + 10 },
      );
    }
    const d = await store.diagnostics();
    expect(d).toMatchObject({ tier: 'durable', lastWrittenAs: 'durable', unflushedEntries: 0 });
    expect((await store.unflushed()).deltas).toEqual([]);
    await store.close();
    // On disk: one range, one cursor, the meta entry; no log entry per merge.
    expect(await keyCounts(at)).toEqual({ ranges: 1, log: 0, other: 2 });
    const again = await LevelDbCoverage.open({ location: at, sinks: [A] });
    expect((await again.diagnostics()).lastWrittenAs).toBe('durable');
    expect((await again.covered({ sink: A, topic: 'orders', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 5000 },
    ]);
    await again.close();
  });

  it('checkpoint forgets the log a life as a local tier left; opening alone (to inspect) keeps it', async () => {
    const at = await location();
    const local = await LevelDbCoverage.open({ location: at, sinks: [A] });
    local.serveAsLocalTier();
    await local.recordDurable([receipt(A, 0, 10)]);
    await local.recordDurable([receipt(A, 20, 30)]);
    expect((await local.diagnostics()).tier).toBe('local');
    await local.close();
    expect((await keyCounts(at)).log).toBe(2);

    const inspected = await LevelDbCoverage.open({ location: at, sinks: [A] });
    expect(await inspected.diagnostics()).toMatchObject({
      lastWrittenAs: 'local',
      unflushedEntries: 2,
    });
    await inspected.close();
    expect((await keyCounts(at)).log).toBe(2);

    const sole = await LevelDbCoverage.open({ location: at, sinks: [A] });
    await sole.checkpoint();
    expect(await sole.diagnostics()).toMatchObject({
      tier: 'durable',
      lastWrittenAs: 'durable',
      unflushedEntries: 0,
    });
    expect((await sole.covered({ sink: A, topic: 'orders', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ]);
    await sole.close();
    expect(await keyCounts(at)).toEqual({ ranges: 2, log: 0, other: 1 });
  });

  it('as a local tier, its own checkpoint leaves the log to the write-behind store', async () => {
    const store = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    store.serveAsLocalTier();
    await store.recordDurable([receipt(A, 0, 10)]);
    await store.checkpoint();
    expect((await store.unflushed()).deltas).toHaveLength(1);
    await store.close();
  });
});
