import { describe, expect, it } from 'vitest';
import { offsetSpan, sinkId, type Receipt } from '@thalweg/connector-core';
import { InMemoryCoverage } from '../src/in-memory-coverage.js';
import type { DurableReceipt } from '../src/coverage-store.js';

const pg = sinkId('pg');
const receipt = (start: number, end: number, sink = pg): DurableReceipt => ({
  sink,
  span: offsetSpan('orders', 0, start, end),
  durability: 'transaction-commit',
  records: end - start,
  bytes: 0,
  submittedAt: 0,
  confirmedAt: 0,
});
const key = { sink: pg, topic: 'orders', partition: 0 };

describe('InMemoryCoverage', () => {
  it('records durable receipts and lists the gaps', async () => {
    const store = new InMemoryCoverage({ sinks: [pg] });
    await store.recordDurable([receipt(0, 10), receipt(20, 30)]);
    expect((await store.covered(key)).ranges()).toEqual([
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ]);
    expect(await store.gaps(key, 0, 40)).toEqual([
      { start: 10, end: 20 },
      { start: 30, end: 40 },
    ]);
    expect(await store.destinations()).toEqual([key]);
  });

  it('refuses a whole call with an unknown sink and records nothing from it', async () => {
    const store = new InMemoryCoverage({ sinks: [pg] });
    await expect(
      store.recordDurable([receipt(0, 10), receipt(10, 20, sinkId('other'))]),
    ).rejects.toThrow(/sink "other" is not one of this store's sinks/);
    expect((await store.covered(key)).rangeCount).toBe(0);
  });

  it('refuses a receipt that does not prove durability (a JavaScript caller)', async () => {
    const store = new InMemoryCoverage({ sinks: [pg] });
    const accepted: Receipt = { ...receipt(0, 10), durability: 'none' };
    await expect(store.recordDurable([accepted as DurableReceipt])).rejects.toMatchObject({
      code: 'TWG_COVERAGE_NOT_DURABLE',
    });
  });

  it('keeps cursors per source partition, as copies', async () => {
    const store = new InMemoryCoverage({ sinks: [pg] });
    const at = { source: 'files', topic: 'events', partition: 0 };
    expect(await store.loadCursor(at)).toBeNull();
    const cursor = {
      kind: 'file-set' as const,
      files: ['a.ndjson', 'b.ndjson'],
      file: 'b.ndjson',
      position: 120,
      nextOffset: 7,
    };
    await store.saveCursor(at, cursor);
    expect(await store.loadCursor(at)).toEqual(cursor);
    expect(await store.loadCursor({ ...at, partition: 1 })).toBeNull();
  });
});
