import { describe, expect, it } from 'vitest';
import { sinkId } from '@thalweg/connector-core';
import { postgresUrl, waitFor } from '@thalweg/test-services';
import { PostgresSink, rowsHeapBytes, type PgTableSpec } from '../src/index.js';
import {
  batchAt,
  confirmedStarts,
  countRows,
  cover,
  holdFirstCommit,
  ID,
  openSink,
  ordersSpec,
  quiet,
  recordingTarget,
  settled,
  spanAt,
  tableFixture,
} from './helpers.js';

const { pool, table } = tableFixture();

describe('PostgresSink', () => {
  it('lands every row exactly once, and a replay adds none but is still confirmed', async () => {
    const spec = table();
    const { sink, target } = await openSink(pool, spec);
    for (let i = 0; i < 12; i++) await sink.submit(batchAt(i), spanAt(i), cover(i));
    await sink.flush();
    expect(await countRows(pool, spec)).toBe(120);
    expect(confirmedStarts(target)).toEqual(Array.from({ length: 12 }, (_, i) => i * 10));
    expect(target.applied[0]!.receipt).toMatchObject({
      sink: ID,
      span: spanAt(0),
      durability: 'transaction-commit',
      records: 10,
    });
    expect(target.applied[0]!.receipt.bytes).toBeGreaterThan(0);
    expect(sink.stats()).toMatchObject({ batches: 12, inserted: 120, duplicates: 0 });

    // The replay: the same spans with the same record ids.
    for (let i = 0; i < 12; i++) await sink.submit(batchAt(i), spanAt(i), cover(i));
    await sink.flush();
    expect(await countRows(pool, spec)).toBe(120);
    expect(target.applied).toHaveLength(24);
    expect(confirmedStarts(target).slice(12)).toEqual(confirmedStarts(target).slice(0, 12));
    expect(sink.stats()).toMatchObject({ batches: 24, inserted: 120, duplicates: 120 });
    await sink.close();
  });

  it('stores values of every column type as given', async () => {
    const spec: PgTableSpec = {
      name: `${ordersSpec().name}-types`,
      columns: [
        { name: 't', type: 'text', nullable: true },
        { name: 'b', type: 'bigint', nullable: true },
        { name: 'i', type: 'integer', nullable: true },
        { name: 'd', type: 'double precision', nullable: true },
        { name: 'f', type: 'boolean', nullable: true },
        { name: 'j', type: 'jsonb', nullable: true },
        { name: 'y', type: 'bytea', nullable: true },
        { name: 'ts', type: 'timestamptz', nullable: true },
      ],
    };
    table(spec);
    const at = new Date('2026-01-02T03:04:05.678Z');
    const row = [
      'a "quoted", {braced} NULL',
      9007199254740993n,
      -7,
      0.5,
      true,
      [1, 'x'],
      new Uint8Array([0, 255]),
      at,
    ];
    for (const statement of ['unnest', 'values'] as const) {
      await pool.query(`drop table if exists "public"."${spec.name}"`);
      const { sink } = await openSink(pool, spec, { statement });
      const nulls = new Array<null>(8).fill(null);
      await sink.submit(
        {
          rows: [
            { recordId: new Uint8Array(16).fill(1), values: row },
            { recordId: new Uint8Array(16).fill(2), values: nulls },
          ],
        },
        spanAt(0),
        cover(0),
      );
      await sink.close();
      const got = await pool.query(
        `select t, b::text as b, i, d, f, j, y, ts from "public"."${spec.name}" order by _twg_record_id`,
      );
      expect(got.rows[0]).toEqual({
        t: row[0],
        b: '9007199254740993',
        i: -7,
        d: 0.5,
        f: true,
        j: [1, 'x'],
        y: Buffer.from([0, 255]),
        ts: at,
      });
      expect(Object.values(got.rows[1] as object).every((v) => v === null)).toBe(true);
    }
  });

  it('confirms in submission order while committing several batches per transaction', async () => {
    const spec = table();
    const commit = holdFirstCommit();
    const { sink, target } = await openSink(pool, spec, {
      maxBatchesPerTransaction: 8,
      hooks: commit.hooks,
    });
    // Two partitions interleaved: order is submission order, not offset order.
    const order: { p: number; i: number }[] = [];
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await commit.entered;
    for (let i = 1; i < 40; i++) {
      const p = i % 2;
      const span = spanAt(i, 10, p);
      order.push({ p, i });
      await sink.submit(batchAt(i), span, { kind: 'derived-coverage', sink: ID, span });
    }
    commit.release();
    await sink.flush();
    expect(target.applied.map((a) => [a.receipt.span.partition, a.receipt.span.start])).toEqual([
      [0, 0],
      ...order.map(({ p, i }) => [p, i * 10]),
    ]);
    // The writer held the first batch while 39 queued: 1 + 8 + 8 + 8 + 8 + 7.
    expect(sink.stats()).toMatchObject({
      transactions: 6,
      batches: 40,
      batchesPerTransaction: { max: 8 },
    });
    expect(await countRows(pool, spec)).toBe(400);
    await sink.close();
  });

  it('makes submit wait while the queue is full, until the writer drains it', async () => {
    const spec = table();
    const commit = holdFirstCommit();
    const { sink, target } = await openSink(pool, spec, {
      maxQueuedBatches: 1,
      maxBatchesPerTransaction: 1,
      hooks: commit.hooks,
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await commit.entered; // the writer holds batch 0 in its transaction
    await sink.submit(batchAt(1), spanAt(1), cover(1)); // fills the queue
    const third = sink.submit(batchAt(2), spanAt(2), cover(2));
    expect(await settled(third)).toBe(false);
    expect(sink.stats().queued).toBe(1);
    expect(target.applied).toHaveLength(0);
    commit.release();
    await third;
    await sink.flush();
    expect(confirmedStarts(target)).toEqual([0, 10, 20]);
    await sink.close();
  });

  it('makes submit wait while the queued rows reach maxQueuedBytes, however few the batches', async () => {
    const spec = table();
    const commit = holdFirstCommit();
    const { sink, target } = await openSink(pool, spec, {
      maxQueuedBatches: 64,
      // Batches 1 and 2 fit; 3, of the same size, does not.
      maxQueuedBytes: rowsHeapBytes(batchAt(1).rows) + rowsHeapBytes(batchAt(2).rows),
      maxBatchesPerTransaction: 1,
      hooks: commit.hooks,
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await commit.entered; // the writer holds batch 0 in its transaction
    await sink.submit(batchAt(1), spanAt(1), cover(1));
    await sink.submit(batchAt(2), spanAt(2), cover(2)); // the byte bound is reached
    const fourth = sink.submit(batchAt(3), spanAt(3), cover(3));
    expect(await settled(fourth)).toBe(false);
    expect(sink.stats().queued).toBe(2);
    commit.release();
    await fourth;
    await sink.flush();
    expect(confirmedStarts(target)).toEqual([0, 10, 20, 30]);
    await sink.close();
  });

  it('carries on past a confirmation target that throws, reporting it', async () => {
    const spec = table();
    const applied: number[] = [];
    const errors: string[] = [];
    const { sink } = await openSink(pool, spec, {
      confirm: {
        apply: async (_c, receipt) => {
          if (receipt.span.start === 10) throw new Error('coverage store down');
          applied.push(receipt.span.start);
        },
      },
      onError: (e) => errors.push(e.code),
    });
    for (let i = 0; i < 4; i++) await sink.submit(batchAt(i), spanAt(i), cover(i));
    await sink.flush();
    expect(applied).toEqual([0, 20, 30]);
    expect(errors).toEqual(['TWG_PG_SINK_CONFIRM_FAILED']);
    expect(sink.stats().confirmFailures).toBe(1);
    expect(await countRows(pool, spec)).toBe(40);
    await sink.close();
  });

  it('confirms an empty batch: its span is covered with nothing to write', async () => {
    const spec = table();
    const { sink, target } = await openSink(pool, spec);
    await sink.submit({ rows: [] }, spanAt(0), cover(0));
    await sink.flush();
    expect(target.applied[0]!.receipt).toMatchObject({ span: spanAt(0), records: 0 });
    await sink.close();
  });

  it('ends the pool it created on close, and leaves a caller’s pool alone', async () => {
    const spec = table();
    // Its own sink id, hence its own application_name: no other test's connections are counted.
    const id = sinkId('pg-pool-owner');
    const sink = await PostgresSink.open({
      id,
      connectionString: postgresUrl(),
      table: spec,
      confirm: recordingTarget(),
      log: quiet,
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0, id));
    await sink.flush();
    const name = `thalweg-sink-postgres/${id}`;
    const live = async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            'select count(*) as n from pg_stat_activity where application_name = $1',
            [name],
          )
        ).rows[0]?.n,
      );
    expect(await live()).toBeGreaterThan(0);
    await Promise.all([sink.close(), sink.close()]);
    // pool.end() waits for its clients to disconnect; the server may list them a moment longer.
    await waitFor(async () => (await live()) === 0, `no session named ${name} left on the server`, {
      timeoutMs: 5_000,
      everyMs: 20,
    });

    const { sink: borrowed } = await openSink(pool, spec);
    await borrowed.close();
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});
