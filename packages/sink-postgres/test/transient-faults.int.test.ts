import { describe, expect, it } from 'vitest';
import { sinkId } from '@thalweg/connector-core';
import { postgresUrl } from '@thalweg/test-services';
import { PostgresSink } from '../src/index.js';
import {
  batchAt,
  confirmedStarts,
  countRows,
  cover,
  ID,
  openSink,
  ordersSpec,
  quiet,
  recordingTarget,
  spanAt,
  tableFixture,
} from './helpers.js';

const { pool, table } = tableFixture();

describe('PostgresSink on transient failures', () => {
  it('reconnects after pg_terminate_backend mid-transaction: every row once, confirms in order', async () => {
    const spec = table();
    let transaction = 0;
    const killedAt: number[] = [];
    const { sink, target } = await openSink(pool, spec, {
      maxBatchesPerTransaction: 3,
      maxRowsPerStatement: 7, // several statements per transaction: the kill lands mid-way
      hooks: {
        beforeCommit: async ({ client, attempt }) => {
          transaction++;
          if (attempt === 1 && transaction % 4 === 2) {
            const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid'))
              .rows[0]!.pid;
            // From another connection, as an operator or a failover would.
            await pool.query('select pg_terminate_backend($1, 5000)', [pid]);
            killedAt.push(transaction);
          }
        },
      },
    });
    for (let i = 0; i < 30; i++) await sink.submit(batchAt(i), spanAt(i), cover(i));
    await sink.flush();
    expect(killedAt.length).toBeGreaterThanOrEqual(2);
    expect(sink.stats().retries).toBe(killedAt.length);
    expect(await countRows(pool, spec)).toBe(300);
    const distinct = await pool.query<{ n: string }>(
      `select count(distinct n) as n from "public"."${spec.name}"`,
    );
    expect(Number(distinct.rows[0]!.n)).toBe(300);
    expect(confirmedStarts(target)).toEqual(Array.from({ length: 30 }, (_, i) => i * 10));
    await sink.close();
  });

  it.each([
    ['40001', 'serialization failure'],
    ['40P01', 'deadlock'],
  ])('rolls back and retries the same transaction on %s (%s)', async (state) => {
    const spec = table();
    const { sink, target } = await openSink(pool, spec, {
      hooks: {
        beforeCommit: async ({ client, attempt }) => {
          // The server itself raises the error inside the transaction, as it would.
          if (attempt === 1)
            await client.query(`do $$ begin raise exception using errcode = '${state}'; end $$`);
        },
      },
    });
    for (let i = 0; i < 3; i++) await sink.submit(batchAt(i), spanAt(i), cover(i));
    await sink.flush();
    expect(sink.stats().retries).toBeGreaterThanOrEqual(1);
    expect(await countRows(pool, spec)).toBe(30);
    expect(confirmedStarts(target)).toEqual([0, 10, 20]);
    await sink.close();
  });

  it('replaces pooled connections the server killed while idle', async () => {
    const spec = table();
    const id = sinkId('pg-idle-kill');
    const target = recordingTarget();
    const sink = await PostgresSink.open({
      id,
      connectionString: postgresUrl(),
      table: spec,
      confirm: target,
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      log: quiet,
      onError: quiet,
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0, id));
    await sink.flush();
    const killed = await pool.query<{ killed: boolean }>(
      `select pg_terminate_backend(pid, 5000) as killed from pg_stat_activity where application_name = $1`,
      [`thalweg-sink-postgres/${id}`],
    );
    expect(killed.rows.length).toBeGreaterThan(0);
    for (let i = 1; i < 6; i++) await sink.submit(batchAt(i), spanAt(i), cover(i, id));
    await sink.flush();
    expect(await countRows(pool, spec)).toBe(60);
    expect(confirmedStarts(target)).toEqual([0, 10, 20, 30, 40, 50]);
    await sink.close();
  });

  it('fails after the retry budget when the server cannot be reached, confirming nothing', async () => {
    const target = recordingTarget();
    const sink = new PostgresSink({
      id: ID,
      // Nothing listens on port 1: every connect is refused.
      connectionString: 'postgres://nobody@127.0.0.1:1/none',
      table: ordersSpec('unreachable'),
      confirm: target,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      onRetryExhausted: 'fail',
      log: quiet,
      onError: quiet,
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await expect(sink.flush()).rejects.toMatchObject({
      code: 'TWG_PG_SINK_RETRIES_EXHAUSTED',
      table: '"public"."unreachable"',
      span: spanAt(0),
    });
    expect(sink.stats().retries).toBe(2);
    expect(target.applied).toHaveLength(0);
    await expect(sink.close()).rejects.toMatchObject({ code: 'TWG_PG_SINK_RETRIES_EXHAUSTED' });
  });
});
