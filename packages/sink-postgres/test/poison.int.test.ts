import { describe, expect, it } from 'vitest';
import { PostgresSinkError, type PgBatch } from '../src/index.js';
import {
  batchAt,
  confirmedStarts,
  countRows,
  cover,
  gate,
  openSink,
  spanAt,
  tableFixture,
} from './helpers.js';

const { pool, table } = tableFixture();

/** Batch i with one value replaced at row `row`, column `column`. */
function spoiled(i: number, row: number, column: number, value: unknown): PgBatch {
  const rows = batchAt(i).rows.map((r, k) =>
    k === row ? { ...r, values: r.values.map((v, c) => (c === column ? value : v)) } : r,
  );
  return { rows };
}

/**
 * Submits batch 0 and holds it in its transaction until batches 1-3 are
 * queued, so that 1-3 are written as one group: the poison must be found
 * inside it, and batch 1 still committed.
 */
async function submitFour(
  sink: Awaited<ReturnType<typeof openSink>>['sink'],
  poison: PgBatch,
  first: { opened: Promise<void> },
  held: { open: () => void },
): Promise<void> {
  await sink.submit(batchAt(0), spanAt(0), cover(0));
  await first.opened;
  await sink.submit(batchAt(1), spanAt(1), cover(1));
  await sink.submit(poison, spanAt(2), cover(2));
  await sink.submit(batchAt(3), spanAt(3), cover(3));
  held.open();
}

function holdingFirst() {
  const first = gate();
  const held = gate();
  let n = 0;
  return {
    first,
    held,
    beforeCommit: async () => {
      if (n++ === 0) {
        first.open();
        await held.opened;
      }
    },
  };
}

describe('PostgresSink poison batches', () => {
  it('fails the sink by default at the refused batch, naming column and span', async () => {
    const spec = table();
    const errors: PostgresSinkError[] = [];
    const h = holdingFirst();
    const { sink, target } = await openSink(pool, spec, {
      maxBatchesPerTransaction: 8,
      onError: (e) => errors.push(e),
      hooks: { beforeCommit: h.beforeCommit },
    });
    await submitFour(sink, spoiled(2, 4, 0, 'not a number'), h.first, h.held);
    const failure = await sink.flush().then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(PostgresSinkError);
    expect(failure).toMatchObject({
      code: 'TWG_PG_SINK_POISON',
      table: `"public"."${spec.name}"`,
      column: 'n',
      span: spanAt(2),
      sqlState: '22P02',
    });
    expect((failure as Error).message).toMatch(/orders\/0\[20,30\).*column "n"/);
    // Batches before the poison committed and were confirmed; it and after were not.
    expect(confirmedStarts(target)).toEqual([0, 10]);
    expect(await countRows(pool, spec)).toBe(20);
    expect(errors).toEqual([failure]);
    expect(sink.stats()).toMatchObject({ poisoned: 1, batches: 2 });
    await expect(sink.submit(batchAt(4), spanAt(4), cover(4))).rejects.toBe(failure);
    await expect(sink.close()).rejects.toBe(failure);
    expect(confirmedStarts(target)).toEqual([0, 10]);
  });

  it('with onPoison "skip", reports the batch, sets it aside unconfirmed (reason poison) and carries on', async () => {
    const spec = table();
    const errors: PostgresSinkError[] = [];
    const h = holdingFirst();
    const { sink, target } = await openSink(pool, spec, {
      maxBatchesPerTransaction: 8,
      onPoison: 'skip',
      statement: 'values',
      onError: (e) => errors.push(e),
      hooks: { beforeCommit: h.beforeCommit },
    });
    // NULL in a NOT NULL column: 23502, the server names the column.
    await submitFour(sink, spoiled(2, 7, 1, null), h.first, h.held);
    await sink.flush();
    expect(confirmedStarts(target)).toEqual([0, 10, 30]);
    expect(await countRows(pool, spec)).toBe(30);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'TWG_PG_SINK_POISON',
      column: 'label',
      span: spanAt(2),
      sqlState: '23502',
    });
    expect(sink.stats()).toMatchObject({ poisoned: 1, batches: 3 });
    // The target hears why, in the batch's place: the pipeline quarantines it.
    expect(target.asides.map((a) => [a.span, a.refusal.reason])).toEqual([[spanAt(2), 'poison']]);
    expect(target.asides[0]?.refusal.error).toBe(errors[0]);
    await sink.close();
  });

  it('names the row as well as the column with the VALUES statement', async () => {
    const spec = table();
    const errors: PostgresSinkError[] = [];
    const { sink } = await openSink(pool, spec, {
      onPoison: 'skip',
      statement: 'values',
      maxRowsPerStatement: 4,
      onError: (e) => errors.push(e),
    });
    await sink.submit(spoiled(0, 6, 3, 'yesterday-ish'), spanAt(0), cover(0));
    await sink.flush();
    expect(errors[0]).toMatchObject({ column: 'at', row: 6, span: spanAt(0) });
    expect(await countRows(pool, spec)).toBe(0);
    await sink.close();
  });
});
