import { Field, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { offsetSpan, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { FakeCatalog, FakeTransportFactory, ZerobusSink } from '@thalweg/sink-zerobus';
import { describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../src/coverage-recorder.js';
import { resolveLaneSettings } from '../src/pipeline-config.js';
import { SecondaryLane } from '../src/secondary-lane.js';
import type { Derived, QuarantineNote } from '../src/topology.js';
import { makeRecords } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

// A secondary lane over the real Zerobus sink (fake transport, fake catalog):
// emit-time reconciliation refuses one batch, a poison BATCH (ADR 0010),
// which must cost that batch and never the lane (ADR 0025).

const ZB = sinkId('zerobus');
const TABLE = 'main.thalweg.events';
const P = { topic: 't', partition: 0 };
const records = makeRecords('t', 0, 50);
const batch = (start: number, end: number): SourceBatch => ({
  span: offsetSpan('t', 0, start, end),
  records: records.slice(start, end),
});

/** One int64 column per name, each holding the batch's offsets. */
function arrowOf(batch: SourceBatch, names: readonly string[]): RecordBatch {
  const length = batch.records.length;
  const values = BigInt64Array.from(batch.records, (r) => BigInt(r.offset));
  const schema = new Schema(names.map((n) => new Field(n, new Int64(), false)));
  const children = names.map(() => makeData({ type: new Int64(), length, data: values }));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, children }));
}

/** Rows with column `n`; the batch at offset 10 carries a column the table does not have. */
function derive(b: SourceBatch): Derived<RecordBatch> {
  return { batch: arrowOf(b, b.span.start === 10 ? ['n', 'extra'] : ['n']), quarantined: [] };
}

describe('SecondaryLane over a Zerobus sink', () => {
  it('quarantines a batch refused at reconciliation as contract and delivers the rest', async () => {
    const catalog = new FakeCatalog();
    await catalog.ensureTable(TABLE, [{ name: 'n', type: 'int64', nullable: false }], {});
    const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
    const coverage = new InMemoryCoverage({ sinks: [ZB] });
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
    const sink = new ZerobusSink<'secondary'>({
      id: ZB,
      config: { table: TABLE, streams: 1 },
      catalog,
      factory,
      confirm: lane.target,
      log: () => undefined,
    });
    lane.start(sink, resolveLaneSettings({}));
    for (let at = 0; at < 40; at += 10) lane.offer(batch(at, at + 10));
    await until(() => lane.stats().deliveredBatches === 3);

    expect(lane.current.kind).toBe('running');
    expect(quarantined).toHaveLength(10);
    expect(quarantined.map((q) => q.note.offset)).toEqual(
      Array.from({ length: 10 }, (_, i) => 10 + i),
    );
    expect(quarantined.every((q) => q.sink === 'zerobus' && q.note.reason === 'contract')).toBe(
      true,
    );
    expect(quarantined[0]?.note.detail).toMatch(/column extra/);
    // Three batches reached the table; the refused span is held by the quarantine.
    expect(factory.server.batches).toHaveLength(3);
    await recorder.drain();
    expect((await coverage.covered({ sink: ZB, ...P })).ranges()).toEqual([{ start: 0, end: 40 }]);
    expect(lane.stats()).toMatchObject({ setAsideBatches: 1, shedBatches: 0, submittedBatches: 3 });
    expect(logs.some((l) => l.includes('set aside t/0[10,20) (poison)'))).toBe(true);
    await lane.stop(5_000);
    expect(lane.current.kind).toBe('closed');
  });
});
