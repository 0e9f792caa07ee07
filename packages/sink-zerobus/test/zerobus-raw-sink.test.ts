import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  assertPrimaryRaw,
  offsetSpan,
  rawAnchor,
  sinkId,
  type HeldPartition,
  type OffsetSpan,
  type SourceBatch,
} from '@thalweg/connector-core';
import { rawBatchesOf } from '@thalweg/stream-arrow';
import { FakeCatalog } from '../src/catalog/fake-catalog.js';
import { PRIMARY_RAW_TABLE_PROPERTIES } from '../src/catalog/precondition.js';
import { FakeTransportFactory } from '../src/fake-transport.js';
import { ZEROBUS_RAW_FIELDS, ZerobusRawSink, type RawReadBack } from '../src/zerobus-raw-sink.js';
import { quiet, recordingTarget } from './helpers.js';

const ID = sinkId('raw');
const TABLE = 'main.raw.events';

const source = (start: number, end: number): SourceBatch => ({
  span: offsetSpan('orders', 2, start, end),
  records: Array.from({ length: end - start }, (_, i) => ({
    offset: start + i,
    key: null,
    value: new Uint8Array([start + i]),
    timestamp: 1_700_000_000_000 + i,
    headers: [['h', new Uint8Array([7])]],
  })),
});

/** A read-back that remembers what it was asked. */
function readBack(held: HeldPartition[] = []): RawReadBack & { asked: OffsetSpan[] } {
  const asked: OffsetSpan[] = [];
  return {
    asked,
    held: async () => held,
    async *read(span) {
      asked.push(span);
      yield* [];
    },
  };
}

async function open(catalog = new FakeCatalog(), clock = new ManualClock()) {
  const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
  const target = recordingTarget<'primary-raw'>();
  const back = readBack();
  const sink = await ZerobusRawSink.open({
    id: ID,
    cluster: 'prod',
    config: { table: TABLE, streams: 1 },
    catalog,
    factory,
    confirm: target,
    readBack: back,
    recheckAfterMs: 10_000,
    clock,
    log: quiet,
  });
  return { sink, catalog, factory, target, back, clock };
}

describe('ZerobusRawSink: Zerobus as the primary raw', () => {
  it('creates a missing table with the raw fields and the properties that pass, and may hold the role', async () => {
    const { sink, catalog } = await open();
    const t = await catalog.describe(TABLE);
    expect(t?.columns.map((c) => c.name)).toEqual(ZEROBUS_RAW_FIELDS.map((f) => f.name));
    expect(t?.properties).toMatchObject(PRIMARY_RAW_TABLE_PROPERTIES);
    expect(() => assertPrimaryRaw(sink.descriptor)).not.toThrow();
    expect(sink.cluster).toBe('prod');
    await sink.close();
  });

  it('refuses to open on a table whose properties do not allow Iceberg reads, naming the property', async () => {
    const catalog = new FakeCatalog();
    await catalog.ensureTable(TABLE, ZEROBUS_RAW_FIELDS, {
      ...PRIMARY_RAW_TABLE_PROPERTIES,
      'delta.enableDeletionVectors': 'true',
    });
    await expect(open(catalog)).rejects.toThrow(
      /primary-raw refused for main\.raw\.events: delta\.enableDeletionVectors is true/,
    );
  });

  it('writes each source batch as raw table rows, and confirms the raw anchor after the durable ack', async () => {
    const { sink, factory, target } = await open();
    const batch = source(10, 14);
    await sink.submit(batch, batch.span, rawAnchor(batch.span));
    await sink.flush();
    expect(target.applied.map((a) => a.confirm)).toEqual([rawAnchor(batch.span)]);
    const rows = factory.server.batches.flatMap((ipc) => tableFromIPC(ipc).batches);
    const [back] = rawBatchesOf(rows, 'server', () => true);
    expect(back?.span).toEqual(batch.span);
    expect(back?.records.map((r) => [r.offset, [...r.value]])).toEqual(
      batch.records.map((r) => [r.offset, [...r.value]]),
    );
    await sink.close();
  });

  it('re-checks the table before each recovery pass, describing it every time', async () => {
    const { sink, catalog } = await open();
    const before = catalog.describes;
    await sink.verifyReadable();
    await sink.verifyReadable();
    expect(catalog.describes - before).toBe(2);
    catalog.alter(TABLE, { properties: { 'delta.columnMapping.mode': 'none' } });
    const refused = sink.verifyReadable();
    await expect(refused).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
    await expect(refused).rejects.toThrow(/delta\.columnMapping\.mode is none/);
    await sink.close();
  });

  it('a property flipped while writing refuses the next batch once recheckAfterMs passed: nothing of it is sent or confirmed', async () => {
    const { sink, catalog, factory, target, clock } = await open();
    const first = source(0, 2);
    await sink.submit(first, first.span, rawAnchor(first.span));
    await sink.flush();
    catalog.alter(TABLE, { properties: { 'delta.enableDeletionVectors': 'true' } });
    const second = source(2, 4);
    // within the interval the sink does not describe the table again
    await sink.submit(second, second.span, rawAnchor(second.span));
    await sink.flush();
    clock.advance(10_000);
    const third = source(4, 6);
    await expect(sink.submit(third, third.span, rawAnchor(third.span))).rejects.toThrow(
      /primary-raw refused for main\.raw\.events while writing: delta\.enableDeletionVectors is true/,
    );
    await sink.flush();
    expect(target.applied.map((a) => a.confirm)).toEqual([
      rawAnchor(first.span),
      rawAnchor(second.span),
    ]);
    expect(factory.server.batches).toHaveLength(2);
    await sink.close();
  });

  it('refuses a bad source batch naming the record, before anything is sent', async () => {
    const { sink, factory } = await open();
    const bad: SourceBatch = {
      span: offsetSpan('orders', 2, 0, 5),
      records: [source(7, 8).records[0]!],
    };
    await expect(sink.submit(bad, bad.span, rawAnchor(bad.span))).rejects.toThrow(
      /batch\.records\[0\]\.offset.*lies outside the batch span/,
    );
    expect(factory.server.batches).toHaveLength(0);
    await sink.close();
  });

  it('reads back through its read-back', async () => {
    const { sink, back } = await open();
    const span = offsetSpan('orders', 2, 0, 9);
    const read: SourceBatch[] = [];
    for await (const b of sink.read(span)) read.push(b);
    expect(read).toEqual([]);
    expect(back.asked).toEqual([span]);
    expect(await sink.held()).toEqual([]);
    await sink.close();
  });
});
