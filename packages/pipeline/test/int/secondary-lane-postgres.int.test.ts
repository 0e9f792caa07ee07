import pg from 'pg';
import { offsetSpan, RecordIdHasher, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { PostgresSink, type PgBatch, type PgTableSpec } from '@thalweg/sink-postgres';
import { postgresUrl, uniqueIdentifier } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../../src/coverage-recorder.js';
import { resolveLaneSettings } from '../../src/pipeline-config.js';
import { SecondaryLane } from '../../src/secondary-lane.js';
import type { Derived, QuarantineNote } from '../../src/topology.js';
import { makeRecords } from '../doubles/memory-sources.js';
import { until } from '../doubles/waits.js';

// A secondary lane over the real PostgreSQL sink: a batch PostgreSQL refuses
// (`onPoison: 'skip'`) and one whose transaction fails through its retries
// (`onRetryExhausted: 'set-aside'`) are set aside by the sink's ack lane and
// quarantined by the pipeline, which goes on with the next batch (ADR 0025).

const PG = sinkId('pg-aside');
const P = { topic: 't', partition: 0 };
const records = makeRecords('t', 0, 50);
const hasher = new RecordIdHasher('memory', 't', 0);
const pool = new pg.Pool({ connectionString: postgresUrl(), max: 4 });
pool.on('error', () => undefined);
const tables: string[] = [];
afterAll(async () => {
  for (const t of tables) await pool.query(`drop table if exists "public"."${t}"`);
  await pool.end();
});

const batch = (start: number, end: number): SourceBatch => ({
  span: offsetSpan('t', 0, start, end),
  records: records.slice(start, end),
});

/** Rows (n, label); the batch at offset 10 has a NULL label, which the NOT NULL column refuses. */
function derive(b: SourceBatch): Derived<PgBatch> {
  const rows = b.records.map((r) => ({
    recordId: hasher.id(r.offset, r.value),
    values: [r.offset, b.span.start === 10 ? null : `row ${r.offset}`],
  }));
  return { batch: { rows }, quarantined: [] };
}

describe('SecondaryLane over a PostgreSQL sink', () => {
  it('quarantines a refused batch as contract and an exhausted one as retry-exhausted, and delivers the rest', async () => {
    const name = uniqueIdentifier('aside');
    tables.push(name);
    const table: PgTableSpec = {
      name,
      columns: [
        { name: 'n', type: 'bigint', nullable: false },
        { name: 'label', type: 'text', nullable: false },
      ],
    };
    const coverage = new InMemoryCoverage({ sinks: [PG] });
    const logs: string[] = [];
    const recorder = new CoverageRecorder(coverage, (l) => logs.push(l));
    const quarantined: { sink: string; note: QuarantineNote }[] = [];
    const lane = new SecondaryLane(
      'secondaries[0]',
      derive,
      recorder,
      (sink, _b, note) => quarantined.push({ sink, note }),
      (l) => logs.push(l),
    );
    const sink = await PostgresSink.open({
      id: PG,
      pool,
      table,
      confirm: lane.target,
      onPoison: 'skip',
      maxBatchesPerTransaction: 1,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
      hooks: {
        // Every attempt of the transaction of [30,40) fails with a retryable SQLSTATE.
        beforeCommit: async ({ client, spans }) => {
          if (spans.some((s) => s.start === 30))
            await client.query(`do $$ begin raise exception using errcode = '40001'; end $$`);
        },
      },
      log: () => undefined,
      onError: () => undefined,
    });
    lane.start(sink, resolveLaneSettings());
    for (let at = 0; at < 50; at += 10) lane.offer(batch(at, at + 10));
    await until(() => lane.stats().deliveredBatches + lane.stats().setAsideBatches === 5);

    expect(lane.current.kind).toBe('running');
    const byReason = (reason: string) =>
      quarantined.filter((q) => q.note.reason === reason).map((q) => q.note.offset);
    expect(byReason('contract')).toEqual(Array.from({ length: 10 }, (_, i) => 10 + i));
    expect(byReason('retry-exhausted')).toEqual(Array.from({ length: 10 }, (_, i) => 30 + i));
    expect(quarantined).toHaveLength(20);
    expect(quarantined.find((q) => q.note.reason === 'contract')?.note.detail).toMatch(
      /TWG_PG_SINK_POISON.*column "label"/,
    );
    expect(quarantined.find((q) => q.note.reason === 'retry-exhausted')?.note.detail).toMatch(
      /TWG_PG_SINK_RETRIES_EXHAUSTED/,
    );
    const rows = await pool.query<{ n: string }>(`select n from "public"."${name}" order by n`);
    expect(rows.rows.map((r) => Number(r.n))).toEqual([
      ...Array.from({ length: 10 }, (_, i) => i),
      ...Array.from({ length: 10 }, (_, i) => 20 + i),
      ...Array.from({ length: 10 }, (_, i) => 40 + i),
    ]);
    // The refused span is held by the quarantine; the exhausted one is recovery's gap.
    await recorder.drain();
    expect((await coverage.covered({ sink: PG, ...P })).ranges()).toEqual([
      { start: 0, end: 30 },
      { start: 40, end: 50 },
    ]);
    await lane.stop(5_000);
    expect(lane.current.kind).toBe('closed');
  });
});
