import { describe, expect, it } from 'vitest';
import type { DqAuditEntry, DqAuditStore } from '../../src/index.js';

/** How a contract case gets a store: a fresh one, and (when it has one) the same one reopened. */
export interface DqAuditSubject {
  readonly name: string;
  readonly open: () => Promise<DqAuditStore>;
  /** Closes `store` and opens what it wrote again; null for a store that keeps nothing. */
  readonly reopen: ((store: DqAuditStore) => Promise<DqAuditStore>) | null;
}

export const entry = (
  start: number,
  end: number,
  passed: number,
  failed: number,
  check = 'c',
  sink = 's',
  partition = 0,
): DqAuditEntry => ({
  sink,
  span: { topic: 't', partition, start, end },
  check,
  passed,
  failed,
});

/** What every dq-audit store does: the file store and the in-memory double alike. */
export function dqAuditContract(subject: DqAuditSubject): void {
  describe(`dq-audit store contract: ${subject.name}`, () => {
    it('counts each window per sink and check, and adds them up per sink', async () => {
      const store = await subject.open();
      await store.record([
        entry(0, 10, 9, 1),
        entry(0, 10, 10, 0, 'd'),
        entry(10, 20, 7, 3),
        entry(0, 5, 5, 0, 'c', 'other'),
      ]);
      expect(await store.read({ sink: 's' })).toEqual([
        entry(0, 10, 9, 1),
        entry(10, 20, 7, 3),
        entry(0, 10, 10, 0, 'd'),
      ]);
      expect(await store.totals('s')).toEqual({
        c: { passed: 16, failed: 4 },
        d: { passed: 10, failed: 0 },
      });
      expect(await store.totals('other')).toEqual({ c: { passed: 5, failed: 0 } });
      expect(await store.totals('none')).toEqual({});
      await store.close();
    });

    it('counts a span recorded again once: the same span, or one inside it', async () => {
      const store = await subject.open();
      await store.record([entry(0, 10, 9, 1)]);
      await store.record([entry(0, 10, 9, 1), entry(2, 6, 4, 0)]);
      expect(await store.read()).toEqual([entry(0, 10, 9, 1)]);
      expect(await store.totals('s')).toEqual({ c: { passed: 9, failed: 1 } });
      await store.close();
    });

    it('lets a span that holds counted ones replace them, and skips a partial overlap', async () => {
      const store = await subject.open();
      await store.record([entry(0, 4, 4, 0), entry(4, 8, 3, 1)]);
      // A replay derived [0, 12) as one batch: the same rows and four more.
      await store.record([entry(0, 12, 10, 2)]);
      // Overlaps [0, 12) only in part: counting it would count [10, 12) twice.
      await store.record([entry(10, 14, 4, 0)]);
      expect(await store.read()).toEqual([entry(0, 12, 10, 2)]);
      expect(await store.totals('s')).toEqual({ c: { passed: 10, failed: 2 } });
      await store.close();
    });

    it('keeps partitions and checks apart', async () => {
      const store = await subject.open();
      await store.record([entry(0, 10, 10, 0, 'c', 's', 0), entry(0, 10, 8, 2, 'c', 's', 1)]);
      expect(await store.read({ partition: 1 })).toEqual([entry(0, 10, 8, 2, 'c', 's', 1)]);
      expect(await store.totals('s')).toEqual({ c: { passed: 18, failed: 2 } });
      await store.close();
    });

    it('refuses an entry no store may hold, naming the field, and records nothing of its call', async () => {
      const store = await subject.open();
      await expect(store.record([entry(0, 10, 1, 0), entry(5, 5, 1, 0)])).rejects.toThrow(
        /span\.end is not after span\.start 5/,
      );
      await expect(store.record([entry(0, 10, -1, 0)])).rejects.toThrow(/passed is not a/);
      await expect(store.record([{ ...entry(0, 1, 1, 0), check: '' }])).rejects.toThrow(
        /check is empty/,
      );
      expect(await store.read()).toEqual([]);
      await store.close();
    });

    it('refuses use once closed', async () => {
      const store = await subject.open();
      await store.close();
      await expect(store.record([entry(0, 1, 1, 0)])).rejects.toThrow(/closed/);
      await expect(store.read()).rejects.toThrow(/closed/);
    });

    const { reopen } = subject;
    if (reopen !== null) {
      it('holds every window across a reopen, and still counts a replayed span once', async () => {
        const first = await subject.open();
        await first.record([entry(0, 10, 9, 1), entry(10, 20, 10, 0)]);
        const again = await reopen(first);
        expect(await again.read()).toEqual([entry(0, 10, 9, 1), entry(10, 20, 10, 0)]);
        await again.record([entry(0, 10, 9, 1), entry(20, 30, 5, 5)]);
        const third = await reopen(again);
        expect(await third.totals('s')).toEqual({ c: { passed: 24, failed: 6 } });
        await third.close();
      });
    }
  });
}
