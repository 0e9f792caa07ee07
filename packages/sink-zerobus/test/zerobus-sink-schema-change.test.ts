import { describe, expect, it } from 'vitest';
import {
  Field,
  Int32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  tableFromIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { derivedCoverage, ManualClock, sinkId } from '@thalweg/connector-core';
import { FakeCatalog } from '../src/catalog/fake-catalog.js';
import { FakeTransportFactory } from '../src/fake-transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { batchOf, quiet, recordingTarget, spanAt } from './helpers.js';

const ID = sinkId('zerobus');
const TABLE = 'main.thalweg.events';

/** `n: int32 NOT NULL` and `note: utf8` (nullable), `rows` rows. */
function batchWithNote(rows: number): RecordBatch {
  const n = vectorFromArray(
    Array.from({ length: rows }, (_, i) => i),
    new Int32(),
  );
  const note = vectorFromArray(
    Array.from({ length: rows }, (_, i) => `note ${i}`),
    new Utf8(),
  );
  const schema = new Schema([
    new Field('n', new Int32(), false),
    new Field('note', new Utf8(), true),
  ]);
  return new RecordBatch(
    schema,
    makeData({
      type: new Struct(schema.fields),
      length: rows,
      children: [n.data[0]!, note.data[0]!],
    }),
  );
}

async function setup(redescribe?: { afterMs: number; clock: ManualClock }) {
  const catalog = new FakeCatalog();
  await catalog.ensureTable(TABLE, [{ name: 'n', type: 'int32', nullable: false }], {});
  const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
  const target = recordingTarget<'secondary'>();
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams: 2 },
    catalog,
    factory,
    confirm: target,
    log: quiet,
    ...(redescribe === undefined
      ? {}
      : { redescribeAfterMs: redescribe.afterMs, clock: redescribe.clock }),
  });
  const cover = (i: number) => derivedCoverage(ID, spanAt(i));
  return { catalog, factory, target, sink, cover };
}

describe('ZerobusSink picks up schema changes', () => {
  it('a column added to the table between batches is written, on streams opened with it', async () => {
    const { catalog, factory, target, sink, cover } = await setup();
    await sink.submit(batchOf(2), spanAt(0), cover(0));
    await sink.flush();
    expect(factory.opened.map((s) => s.spec.fields.map((f) => f.name))).toEqual([['n']]);

    catalog.alter(TABLE, {
      columns: [
        { name: 'n', type: 'int32', nullable: false },
        { name: 'note', type: 'utf8', nullable: true },
      ],
    });
    await sink.submit(batchWithNote(3), spanAt(1), cover(1));
    await sink.flush();

    // The old pool was drained and closed; the new one opened with the new column.
    expect(factory.opened.map((s) => s.spec.fields.map((f) => f.name))).toEqual([
      ['n'],
      ['n', 'note'],
    ]);
    const last = tableFromIPC(factory.server.batches[1]);
    expect([...last.getChild('note')!]).toEqual(['note 0', 'note 1', 'note 2']);
    expect(target.applied).toHaveLength(2);
    // The pool's totals carry over the re-plan.
    expect(sink.stats()).toMatchObject({ deliveredBatches: 2, deliveredRecords: 5 });

    // A batch without the new column still fits (filled with nulls), on the new streams.
    await sink.submit(batchOf(1), spanAt(2), cover(2));
    await sink.flush();
    expect([...tableFromIPC(factory.server.batches[2]).getChild('note')!]).toEqual([null]);
    await sink.close();
  });

  it('steady traffic of one shape describes the table once', async () => {
    const { catalog, sink, cover } = await setup();
    const before = catalog.describes;
    for (let i = 0; i < 5; i++) await sink.submit(batchOf(2), spanAt(i), cover(i));
    await sink.flush();
    expect(catalog.describes - before).toBe(1);
    await sink.close();
  });

  it('a batch with a column the table still lacks is refused after describing again', async () => {
    const { catalog, factory, sink, cover } = await setup();
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    const before = catalog.describes;
    await expect(sink.submit(batchWithNote(1), spanAt(1), cover(1))).rejects.toThrow(
      /column note is not a column of the table/,
    );
    expect(catalog.describes - before).toBe(1);
    // The sink goes on with what fits.
    await sink.submit(batchOf(1), spanAt(2), cover(2));
    await sink.flush();
    expect(factory.server.batches).toHaveLength(2);
    await sink.close();
  });

  it('with redescribeAfterMs, a change no batch reveals is picked up once the interval passed', async () => {
    const clock = new ManualClock();
    const { catalog, factory, sink, cover } = await setup({ afterMs: 1_000, clock });
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    catalog.alter(TABLE, {
      columns: [
        { name: 'n', type: 'int32', nullable: false },
        { name: 'note', type: 'utf8', nullable: true },
      ],
    });
    const before = catalog.describes;
    clock.advance(999);
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    expect(catalog.describes - before).toBe(0);
    clock.advance(1);
    await sink.submit(batchOf(1), spanAt(2), cover(2));
    await sink.flush();
    expect(catalog.describes - before).toBe(1);
    // Both streams of the pool opened with the old columns, then the new pool with the new.
    expect(factory.opened.map((s) => s.spec.fields.map((f) => f.name))).toEqual([
      ['n'],
      ['n'],
      ['n', 'note'],
    ]);
    expect([...tableFromIPC(factory.server.batches[2]).getChild('note')!]).toEqual([null]);
    await sink.close();
  });

  it('refuses a redescribeAfterMs that is not a positive number', () => {
    expect(
      () =>
        new ZerobusSink<'secondary'>({
          id: ID,
          config: { table: TABLE, streams: 1 },
          catalog: new FakeCatalog(),
          redescribeAfterMs: 0,
          factory: new FakeTransportFactory(),
          confirm: recordingTarget(),
          log: quiet,
        }),
    ).toThrow(/redescribeAfterMs must be a positive number/);
  });
});
