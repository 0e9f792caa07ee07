import { afterAll, describe, expect, it } from 'vitest';
import { NO_CONFIRM, sinkId } from '@thalweg/connector-core';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { uniqueIdentifier } from '@thalweg/test-services';
import { PostgresSinkError, type PgTableSpec } from '../src/index.js';
import {
  batchAt,
  confirmedStarts,
  countRows,
  cover,
  dropTable,
  ID,
  openSink,
  ordersSpec,
  spanAt,
  testPool,
} from './helpers.js';

const pool = testPool();
const tables: PgTableSpec[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const t of tables) await dropTable(pool, t);
  for (const s of schemas) await pool.query(`drop schema if exists "${s}" cascade`);
  await pool.end();
});

async function fresh() {
  const spec = ordersSpec();
  tables.push(spec);
  const schema = uniqueIdentifier('twg_cov');
  schemas.push(schema);
  const coverage = await PostgresCoverage.open({ pool, schema, sinks: [ID] });
  return { spec, coverage };
}

const key = { sink: ID, topic: 'orders', partition: 0 };

/** Terminates the transaction's own backend from another connection, and waits until it is gone. */
async function killBackend(client: { query: (q: string) => Promise<{ rows: unknown[] }> }) {
  const pid = ((await client.query('select pg_backend_pid() as pid')).rows[0] as { pid: number })
    .pid;
  await pool.query('select pg_terminate_backend($1, 5000)', [pid]);
}

describe('PostgresSink with coverage in the same transaction', () => {
  it('commits coverage for exactly the confirmed spans', async () => {
    const { spec, coverage } = await fresh();
    const { sink, target } = await openSink(pool, spec, { coverage, maxBatchesPerTransaction: 4 });
    for (let i = 0; i < 10; i++) {
      if (i === 6) continue; // a gap stays a gap
      await sink.submit(batchAt(i), spanAt(i), cover(i));
    }
    // A 'none' confirmation writes rows but claims no coverage.
    await sink.submit(batchAt(12), spanAt(12), NO_CONFIRM);
    await sink.flush();
    expect(confirmedStarts(target)).toEqual([0, 10, 20, 30, 40, 50, 70, 80, 90, 120]);
    expect((await coverage.covered(key)).ranges()).toEqual([
      { start: 0, end: 60 },
      { start: 70, end: 100 },
    ]);
    expect(await countRows(pool, spec)).toBe(100);
    await sink.close();
    await coverage.close();
  });

  it('retries a transaction whose connection died before COMMIT: rows and coverage once', async () => {
    const { spec, coverage } = await fresh();
    let killed = 0;
    const { sink, target } = await openSink(pool, spec, {
      coverage,
      hooks: {
        beforeCommit: async ({ client, attempt }) => {
          if (attempt === 1 && killed < 2) {
            killed++;
            await killBackend(client);
          }
        },
      },
    });
    for (let i = 0; i < 5; i++) await sink.submit(batchAt(i), spanAt(i), cover(i));
    await sink.flush();
    expect(killed).toBe(2);
    expect(sink.stats().retries).toBeGreaterThanOrEqual(2);
    expect(await countRows(pool, spec)).toBe(50);
    expect(confirmedStarts(target)).toEqual([0, 10, 20, 30, 40]);
    expect((await coverage.covered(key)).ranges()).toEqual([{ start: 0, end: 50 }]);
    await sink.close();
    await coverage.close();
  });

  it('leaves neither rows nor coverage of a transaction that never commits', async () => {
    const { spec, coverage } = await fresh();
    const errors: PostgresSinkError[] = [];
    const { sink, target } = await openSink(pool, spec, {
      coverage,
      onRetryExhausted: 'fail',
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      onError: (e) => errors.push(e),
      hooks: {
        // Every attempt of the transaction holding span 2 loses its connection.
        beforeCommit: async ({ client, spans }) => {
          if (spans.some((s) => s.start === 20)) await killBackend(client);
        },
      },
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await sink.submit(batchAt(1), spanAt(1), cover(1));
    await sink.flush();
    await sink.submit(batchAt(2), spanAt(2), cover(2));
    const failure: unknown = await sink.flush().then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({
      code: 'TWG_PG_SINK_RETRIES_EXHAUSTED',
      table: `"public"."${spec.name}"`,
      span: spanAt(2),
    });
    expect((failure as Error).message).toMatch(/orders\/0\[20,30\).*failed 3 times/);
    expect(errors).toEqual([failure]);
    expect(sink.stats().retries).toBe(2);
    expect(confirmedStarts(target)).toEqual([0, 10]);
    expect(await countRows(pool, spec)).toBe(20);
    expect((await coverage.covered(key)).ranges()).toEqual([{ start: 0, end: 20 }]);
    await expect(sink.submit(batchAt(3), spanAt(3), cover(3))).rejects.toBe(failure);
    await expect(sink.close()).rejects.toBe(failure);
    await coverage.close();
  });

  it('by default sets aside a group whose retries ran out and carries on: its span stays a gap', async () => {
    const { spec, coverage } = await fresh();
    const errors: PostgresSinkError[] = [];
    const { sink, target } = await openSink(pool, spec, {
      coverage,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      onError: (e) => errors.push(e),
      hooks: {
        // Every attempt of the transaction holding span 2 loses its connection.
        beforeCommit: async ({ client, spans }) => {
          if (spans.some((s) => s.start === 20)) await killBackend(client);
        },
      },
    });
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await sink.submit(batchAt(1), spanAt(1), cover(1));
    await sink.flush();
    await sink.submit(batchAt(2), spanAt(2), cover(2));
    await sink.flush();
    // The sink is not failed: the next batch commits on a fresh connection.
    await sink.submit(batchAt(3), spanAt(3), cover(3));
    await sink.flush();
    expect(sink.failed).toBeNull();
    expect(target.asides.map((a) => [a.span, a.refusal.reason])).toEqual([
      [spanAt(2), 'retry-exhausted'],
    ]);
    expect(target.asides[0]?.refusal.error).toMatchObject({
      code: 'TWG_PG_SINK_RETRIES_EXHAUSTED',
      span: spanAt(2),
    });
    expect(errors).toEqual([target.asides[0]?.refusal.error]);
    expect(sink.stats()).toMatchObject({ retries: 2, retriesExhausted: 1 });
    expect(confirmedStarts(target)).toEqual([0, 10, 30]);
    expect(await countRows(pool, spec)).toBe(30);
    expect((await coverage.covered(key)).ranges()).toEqual([
      { start: 0, end: 20 },
      { start: 30, end: 40 },
    ]);
    await sink.close();
    await coverage.close();
  });

  it('fails without retrying when the coverage store does not know the sink', async () => {
    const { spec } = await fresh();
    const schema = uniqueIdentifier('twg_cov');
    schemas.push(schema);
    const elsewhere = await PostgresCoverage.open({ pool, schema, sinks: [sinkId('elsewhere')] });
    const { sink, target } = await openSink(pool, spec, { coverage: elsewhere });
    await sink.submit(batchAt(0), spanAt(0), cover(0));
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_PG_SINK_FATAL' });
    expect(sink.stats().retries).toBe(0);
    expect(target.applied).toHaveLength(0);
    expect(await countRows(pool, spec)).toBe(0);
    await sink.close().catch(() => undefined);
    await elsewhere.close();
  });
});
