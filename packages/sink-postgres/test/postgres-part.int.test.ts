import { recordingPartContext } from '@thalweg/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import {
  derivedCoverage,
  offsetSpan,
  runDerivation,
  sinkId,
  type SinkContext,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { postgresUrl, uniqueIdentifier, uniqueName } from '@thalweg/test-services';
import { postgres, type PgTableSpec } from '../src/index.js';
import { countRows, recordingTarget, testPool } from './helpers.js';

const schema = uniqueIdentifier('part_pg');
const admin = testPool(2);
afterAll(async () => {
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
});

function table(): PgTableSpec {
  return {
    schema,
    name: uniqueIdentifier('events'),
    columns: [
      { name: 'n', type: 'bigint', nullable: false },
      { name: 'label', type: 'text', nullable: true },
    ],
  };
}

function context(id: string, memoryLimitBytes?: number) {
  const { context, info, debug } = recordingPartContext(memoryLimitBytes);
  const confirm = recordingTarget();
  const ctx: SinkContext<'secondary'> = { ...context, id: sinkId(id), cluster: 'prod-eu', confirm };
  return { ctx, info, debug, confirm };
}

function raw(values: readonly string[], start = 0): SourceBatch {
  return {
    span: offsetSpan('events', 0, start, start + values.length),
    records: values.map((v, i): SourceRecord => ({
      offset: start + i,
      key: null,
      value: Buffer.from(v),
      timestamp: 0,
      headers: [],
    })),
  };
}

/** `n,label` -> [n, label]. */
const csvRow = (r: SourceRecord): readonly unknown[] => Buffer.from(r.value).toString().split(',');

/** Backends of the pool a sink created, found by the application name it gives them. */
async function backendsOf(id: string): Promise<number> {
  const r = await admin.query<{ n: string }>(
    'select count(*) as n from pg_stat_activity where application_name = $1',
    [`thalweg-sink-postgres/${id}`],
  );
  return Number(r.rows[0]?.n);
}

/** Waits, on the condition itself, for the server to have dropped the sink's backends. */
async function untilNoBackends(id: string): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const n = await backendsOf(id);
    if (n === 0) return 0;
    await new Promise((r) => setImmediate(r));
  }
  return backendsOf(id);
}

describe('postgres(): opened against PostgreSQL', () => {
  it('writes derived rows, confirms through the context, logs settings at debug, ends the pool it created', async () => {
    const spec = table();
    const id = uniqueName('pg-part');
    const { ctx, info, debug, confirm } = context(id);
    const part = postgres({ connectionString: postgresUrl(), table: spec, row: csvRow });
    const opened = await part.open(ctx);
    const batch = raw(['1,a', '2,b', 'three']);
    const derived = await runDerivation(opened.derive, ctx.cluster, batch);
    // 'three' has one value for two columns: quarantined, not written.
    expect(derived.quarantined.map((q) => [q.offset, q.reason])).toEqual([[2, 'contract']]);
    if (derived.batch === null) throw new Error('expected rows');
    await opened.sink.submit(derived.batch, batch.span, derivedCoverage(ctx.id, batch.span));
    await opened.sink.flush();

    expect(confirm.applied.map((a) => [a.confirm.kind, a.receipt.durability])).toEqual([
      ['derived-coverage', 'transaction-commit'],
    ]);
    expect(await countRows(admin, spec)).toBe(2);
    expect(opened.stats()).toMatchObject({ batches: 1, inserted: 2, duplicates: 0 });
    expect(debug.join('\n')).toContain(
      `thalweg sink-postgres ${id}: table="${schema}"."${spec.name}"`,
    );
    expect(info).toEqual([]);

    // The replay of the same raw batch derives the same ids: nothing is added.
    const again = await runDerivation(opened.derive, ctx.cluster, batch);
    if (again.batch === null) throw new Error('expected rows');
    await opened.sink.submit(again.batch, batch.span, derivedCoverage(ctx.id, batch.span));
    await opened.sink.flush();
    expect(opened.stats()).toMatchObject({ batches: 2, inserted: 2, duplicates: 2 });

    expect(await backendsOf(id)).toBeGreaterThan(0);
    await opened.sink.close();
    await opened.release?.();
    expect(await untilNoBackends(id)).toBe(0);
  });

  it("reports the sink's errors through context.log.info by default", async () => {
    const spec = table();
    const { ctx, info } = context(uniqueName('pg-part'));
    const part = postgres({
      connectionString: postgresUrl(),
      table: spec,
      row: csvRow,
      onPoison: 'skip',
    });
    const opened = await part.open(ctx);
    // 'x' is no bigint: PostgreSQL refuses the batch (poison), the sink skips it.
    const batch = raw(['x,a']);
    const derived = await runDerivation(opened.derive, ctx.cluster, batch);
    if (derived.batch === null) throw new Error('expected rows');
    await opened.sink.submit(derived.batch, batch.span, derivedCoverage(ctx.id, batch.span));
    await opened.sink.flush();
    await opened.sink.close();
    expect(info).toHaveLength(1);
    expect(info[0]).toContain(`thalweg sink-postgres ${ctx.id}:`);
    expect(info[0]).toContain('TWG_PG_SINK_POISON');
    expect(opened.stats().poisoned).toBe(1);
  });

  it('leaves a pool the caller gave open after the sink closed', async () => {
    const spec = table();
    const pool = testPool(2);
    try {
      const { ctx } = context(uniqueName('pg-part'));
      const opened = await postgres({ pool, table: spec, row: csvRow }).open(ctx);
      await opened.sink.close();
      await opened.release?.();
      expect(await countRows(pool, spec)).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it("queues at most a thirty-second of the topology's memory limit, at most 32 MiB, unless given a bound", async () => {
    const MiB = 1024 * 1024;
    const spec = table();
    const pool = testPool(2);
    const queued = async (memoryLimitBytes?: number, maxQueuedBytes?: number) => {
      const { ctx, debug } = context(uniqueName('pg-part'), memoryLimitBytes);
      const opened = await postgres({
        pool,
        table: spec,
        row: csvRow,
        ...(maxQueuedBytes === undefined ? {} : { maxQueuedBytes }),
      }).open(ctx);
      await opened.sink.close();
      return /maxQueuedBytes=(\d+)/.exec(debug.join('\n'))?.[1];
    };
    try {
      expect(await queued()).toBe(String(32 * MiB));
      expect(await queued(512 * MiB)).toBe(String(16 * MiB));
      expect(await queued(512 * MiB, 2 * MiB)).toBe(String(2 * MiB));
    } finally {
      await pool.end();
    }
  });
});
