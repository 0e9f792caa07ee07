import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { offsetSpan, sinkId, type Receipt, type SinkId } from '@thalweg/connector-core';
import type { CoverageStore, DurableReceipt } from '../../src/coverage-store.js';
import { CoverageError } from '../../src/errors.js';
import { cursorRewindContract } from './cursor-rewind-contract.js';

export interface ContractFixture {
  readonly store: CoverageStore;
  /** Closes the store and opens the same storage again (persistent backends only). */
  readonly reopen?: () => Promise<CoverageStore>;
}

export interface ContractBackend {
  /** A store over fresh, isolated storage, knowing `sinks`. */
  fresh(sinks: readonly SinkId[]): Promise<ContractFixture>;
  /** Runs of the randomised model test (real backends are slower). */
  readonly propertyRuns?: number;
  /** Whether the storage outlives the store object (every backend but in-memory). */
  readonly persistent: boolean;
}

export const A = sinkId('sink-a');
export const B = sinkId('sink-b');

export function receipt(
  sink: SinkId,
  start: number,
  end: number,
  topic = 'orders',
  partition = 0,
): DurableReceipt {
  return {
    sink,
    span: offsetSpan(topic, partition, start, end),
    durability: 'transaction-commit',
    records: end - start,
    bytes: 0,
    submittedAt: 0,
    confirmedAt: 0,
  };
}

const key = (sink: SinkId, topic = 'orders', partition = 0) => ({ sink, topic, partition });

/**
 * The behaviour every CoverageStore backend must show, run against each of
 * them (in memory, LevelDB, PostgreSQL, S3, and the write-behind pair).
 */
export function describeCoverageContract(name: string, backend: ContractBackend): void {
  describe(`CoverageStore contract: ${name}`, () => {
    it('records durable receipts and lists the gaps below a bound', async () => {
      const { store } = await backend.fresh([A]);
      await store.recordDurable([receipt(A, 0, 10), receipt(A, 20, 30)]);
      expect((await store.covered(key(A))).ranges()).toEqual([
        { start: 0, end: 10 },
        { start: 20, end: 30 },
      ]);
      expect(await store.gaps(key(A), 0, 40)).toEqual([
        { start: 10, end: 20 },
        { start: 30, end: 40 },
      ]);
      await store.close();
    });

    it('merges by union across calls: adjacent ranges join, gaps stay open, repeats change nothing', async () => {
      const { store } = await backend.fresh([A]);
      await store.recordDurable([receipt(A, 10, 20)]);
      await store.recordDurable([receipt(A, 0, 10), receipt(A, 25, 30)]);
      await store.recordDurable([receipt(A, 5, 15), receipt(A, 0, 10)]);
      expect((await store.covered(key(A))).ranges()).toEqual([
        { start: 0, end: 20 },
        { start: 25, end: 30 },
      ]);
      await store.close();
    });

    it('keeps destinations apart: sinks, topics and partitions', async () => {
      const { store } = await backend.fresh([A, B]);
      await store.recordDurable([
        receipt(A, 0, 5),
        receipt(B, 5, 10),
        receipt(A, 100, 200, 'orders', 1),
        receipt(A, 7, 9, 'payments', 0),
      ]);
      expect((await store.covered(key(A))).ranges()).toEqual([{ start: 0, end: 5 }]);
      expect((await store.covered(key(B))).ranges()).toEqual([{ start: 5, end: 10 }]);
      expect((await store.covered(key(A, 'orders', 1))).ranges()).toEqual([
        { start: 100, end: 200 },
      ]);
      expect((await store.covered(key(A, 'payments'))).ranges()).toEqual([{ start: 7, end: 9 }]);
      const listed = (await store.destinations())
        .map((k) => `${k.sink}/${k.topic}/${k.partition}`)
        .sort();
      expect(listed).toEqual([
        'sink-a/orders/0',
        'sink-a/orders/1',
        'sink-a/payments/0',
        'sink-b/orders/0',
      ]);
      await store.close();
    });

    it('never claims an offset nobody recorded (random model test)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.array(
              fc
                .tuple(fc.nat(300), fc.integer({ min: 1, max: 40 }))
                .map(([s, n]) => [s, s + n] as const),
              { minLength: 1, maxLength: 6 },
            ),
            { minLength: 1, maxLength: 6 },
          ),
          async (calls) => {
            const { store } = await backend.fresh([A]);
            const truth = new Set<number>();
            for (const call of calls) {
              await store.recordDurable(call.map(([s, e]) => receipt(A, s, e)));
              for (const [s, e] of call) for (let o = s; o < e; o++) truth.add(o);
            }
            const covered = await store.covered(key(A));
            for (let o = 0; o < 345; o++) expect(covered.contains(o)).toBe(truth.has(o));
            await store.close();
          },
        ),
        { numRuns: backend.propertyRuns ?? 50 },
      );
    });

    it('refuses a whole call naming an unknown sink, and records nothing from it', async () => {
      const { store } = await backend.fresh([A]);
      await store.recordDurable([receipt(A, 0, 10)]);
      const err = await store
        .recordDurable([receipt(A, 10, 20), receipt(sinkId('ghost'), 0, 1)])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CoverageError);
      expect(err).toMatchObject({ code: 'TWG_COVERAGE_UNKNOWN_SINK' });
      expect((err as Error).message).toMatch(/sink "ghost"/);
      expect((await store.covered(key(A))).ranges()).toEqual([{ start: 0, end: 10 }]);
      await expect(store.covered(key(sinkId('ghost')))).rejects.toMatchObject({
        code: 'TWG_COVERAGE_UNKNOWN_SINK',
      });
      await store.close();
    });

    it('refuses receipts that do not prove durability, and inverted or negative ranges', async () => {
      const { store } = await backend.fresh([A]);
      const accepted: Receipt = { ...receipt(A, 0, 10), durability: 'none' };
      await expect(store.recordDurable([accepted as DurableReceipt])).rejects.toMatchObject({
        code: 'TWG_COVERAGE_NOT_DURABLE',
      });
      const inverted = {
        ...receipt(A, 0, 10),
        span: { topic: 'orders', partition: 0, start: 9, end: 3 },
      };
      await expect(store.recordDurable([receipt(A, 50, 60), inverted])).rejects.toMatchObject({
        code: 'TWG_COVERAGE_RANGE_INVALID',
      });
      await expect(store.merge([{ key: key(A), ranges: [{ start: -4, end: 2 }] }])).rejects.toThrow(
        /start: -4/,
      );
      expect((await store.covered(key(A))).rangeCount).toBe(0);
      await store.close();
    });

    it('keeps cursors per source partition and never moves one back', async () => {
      const { store } = await backend.fresh([A]);
      const at = { source: 'files', topic: 'events', partition: 0 };
      expect(await store.loadCursor(at)).toBeNull();
      const cursor = (nextOffset: number, file: string) =>
        ({
          kind: 'file-set',
          files: ['a.ndjson', 'b.ndjson'],
          file,
          position: nextOffset * 10,
          nextOffset,
        }) as const;
      await store.saveCursor(at, cursor(7, 'a.ndjson'));
      await store.saveCursor(at, cursor(12, 'b.ndjson'));
      await store.saveCursor(at, cursor(9, 'a.ndjson'));
      expect(await store.loadCursor(at)).toEqual(cursor(12, 'b.ndjson'));
      expect(await store.loadCursor({ ...at, partition: 1 })).toBeNull();
      await expect(store.saveCursor(at, { ...cursor(3, 'a'), nextOffset: -1 })).rejects.toThrow(
        /nextOffset: -1/,
      );
      await store.close();
    });

    it('lists only the destinations that hold coverage', async () => {
      const { store } = await backend.fresh([A]);
      // A delta without ranges names a destination but records nothing for it.
      await store.merge([
        { key: key(A, 'orders', 1), ranges: [] },
        { key: key(A), ranges: [{ start: 0, end: 1 }] },
      ]);
      expect(
        (await store.destinations()).map((k) => `${k.sink}/${k.topic}/${k.partition}`),
      ).toEqual(['sink-a/orders/0']);
      await store.close();
    });

    it('refuses a topic it could not store as written (lone surrogates), recording nothing', async () => {
      const fixture = await backend.fresh([A]);
      // UTF-8 (LevelDB keys, PostgreSQL text) stores every lone surrogate as
      // U+FFFD: accepted, these would share one destination with 'orders\uFFFD'.
      await fixture.store.recordDurable([receipt(A, 0, 10, 'orders\uFFFD')]);
      for (const [i, topic] of ['orders\uD800', 'orders\uDC00', 'orders\uD83D'].entries()) {
        await expect(
          fixture.store.recordDurable([receipt(A, 20 + i, 21 + i), receipt(A, 0, 5, topic)]),
        ).rejects.toMatchObject({ code: 'TWG_COVERAGE_RANGE_INVALID' });
        await expect(fixture.store.covered(key(A, topic))).rejects.toMatchObject({
          code: 'TWG_COVERAGE_RANGE_INVALID',
        });
      }
      await fixture.store.recordDurable([receipt(A, 0, 3, 'orders\u{1F600}')]);
      await fixture.store.checkpoint();
      const store = fixture.reopen === undefined ? fixture.store : await fixture.reopen();
      expect((await store.covered(key(A, 'orders\uFFFD'))).ranges()).toEqual([
        { start: 0, end: 10 },
      ]);
      expect((await store.covered(key(A, 'orders\u{1F600}'))).ranges()).toEqual([
        { start: 0, end: 3 },
      ]);
      expect((await store.covered(key(A))).rangeCount).toBe(0);
      await store.close();
    });

    it('refuses an impossible window on read, as writes refuse impossible ranges', async () => {
      const { store } = await backend.fresh([A]);
      await store.recordDurable([receipt(A, 0, 10)]);
      for (const [from, to] of [
        [-1, 10],
        [0, Number.POSITIVE_INFINITY],
        [Number.NaN, 10],
        [0, 2 ** 53],
        [2 ** 53, 2 ** 53 + 2],
        [0.5, 10],
        [20, 10],
      ] as const) {
        const refused = store.gaps(key(A), from, to);
        await expect(refused).rejects.toMatchObject({ code: 'TWG_COVERAGE_RANGE_INVALID' });
        await expect(refused).rejects.toThrow(/gaps\.(from|to)/);
      }
      // An empty window is a possible one: it has no gaps.
      expect(await store.gaps(key(A), 5, 5)).toEqual([]);
      expect(await store.gaps(key(A), 0, Number.MAX_SAFE_INTEGER)).toEqual([
        { start: 10, end: Number.MAX_SAFE_INTEGER },
      ]);
      await store.close();
    });

    it('says which sinks it keeps coverage for', async () => {
      const { store } = await backend.fresh([A]);
      expect(store.knows(A)).toBe(true);
      expect(store.knows(B)).toBe(false);
      await store.close();
    });

    it('refuses a cursor key it could not read back as written, saving nothing', async () => {
      const { store } = await backend.fresh([A]);
      const at = { source: 'files', topic: 'events', partition: 1 };
      const cursor = { kind: 'stream-token', token: 'x', nextOffset: 50 } as const;
      for (const bad of [
        { partition: 1.5 },
        { partition: -1 },
        { partition: 2 ** 31 },
        { partition: 2 ** 32 + 1 },
        { topic: '' },
        { topic: 'ev\u0000ents' },
        { topic: 'events\uD800' },
        { source: 'files\uDC00' },
      ]) {
        const wrong = { ...at, ...bad };
        await expect(store.saveCursor(wrong, cursor)).rejects.toMatchObject({
          code: 'TWG_COVERAGE_RANGE_INVALID',
        });
        await expect(store.loadCursor(wrong)).rejects.toMatchObject({
          code: 'TWG_COVERAGE_RANGE_INVALID',
        });
      }
      expect(await store.loadCursor(at)).toBeNull();
      // Every partition number in [0, 2^31) is its own key.
      for (const partition of [0, 1, 65_536, 2 ** 31 - 1])
        await store.saveCursor({ ...at, partition }, { ...cursor, nextOffset: partition + 1 });
      for (const partition of [0, 1, 65_536, 2 ** 31 - 1])
        expect((await store.loadCursor({ ...at, partition }))?.nextOffset).toBe(partition + 1);
      await store.close();
    });

    it('keeps a message-id cursor as written, and refuses one without an id', async () => {
      const { store } = await backend.fresh([A]);
      const at = { source: 'pulsar', topic: 'persistent://t/ns/orders', partition: 2 };
      const cursor = { kind: 'message-id', messageId: 'CBQQADAA', nextOffset: 21 } as const;
      await store.saveCursor(at, cursor);
      expect(await store.loadCursor(at)).toEqual(cursor);
      await expect(
        store.saveCursor(at, { kind: 'message-id', messageId: '', nextOffset: 30 }),
      ).rejects.toMatchObject({ code: 'TWG_COVERAGE_RANGE_INVALID', message: /cursor\.messageId/ });
      expect(await store.loadCursor(at)).toEqual(cursor);
      await store.close();
    });

    it('refuses use after close', async () => {
      const { store } = await backend.fresh([A]);
      await store.close();
      await expect(store.recordDurable([receipt(A, 0, 1)])).rejects.toMatchObject({
        code: 'TWG_COVERAGE_CLOSED',
      });
    });

    cursorRewindContract(name, backend);

    if (!backend.persistent) return;

    it('holds coverage and cursors across a reopen', async () => {
      const fixture = await backend.fresh([A]);
      if (fixture.reopen === undefined)
        throw new Error(`${name} is persistent but its fixture cannot reopen`);
      await fixture.store.recordDurable([receipt(A, 0, 10), receipt(A, 30, 40)]);
      await fixture.store.saveCursor(
        { source: 's', topic: 't', partition: 0 },
        { kind: 'stream-token', token: 'x', nextOffset: 4 },
      );
      await fixture.store.checkpoint();
      const again = await fixture.reopen();
      expect((await again.covered(key(A))).ranges()).toEqual([
        { start: 0, end: 10 },
        { start: 30, end: 40 },
      ]);
      expect(await again.loadCursor({ source: 's', topic: 't', partition: 0 })).toEqual({
        kind: 'stream-token',
        token: 'x',
        nextOffset: 4,
      });
      await again.close();
    });
  });
}
