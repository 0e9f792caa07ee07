import { describe, expect, it } from 'vitest';
import { assertPrimaryRaw, sinkId } from '@thalweg/connector-core';
import type { Catalog, TableDescription } from '../src/catalog/catalog.js';
import { FakeCatalog } from '../src/catalog/fake-catalog.js';
import { PRIMARY_RAW_TABLE_PROPERTIES } from '../src/catalog/precondition.js';
import { FakeTransportFactory } from '../src/fake-transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { quiet, recordingTarget } from './helpers.js';

const ID = sinkId('zerobus-raw');
const TABLE = 'main.raw.events';

/** The fake catalog, with a switch that makes the table vanish (unregistered). */
class DroppableCatalog implements Catalog {
  readonly fake = new FakeCatalog();
  dropped = false;
  ensureTable: Catalog['ensureTable'] = (n, c, p) => this.fake.ensureTable(n, c, p);
  describe = async (name: string): Promise<TableDescription | null> => {
    const t = await this.fake.describe(name);
    return this.dropped ? null : t;
  };
}

async function sinkOnRawTable() {
  const catalog = new DroppableCatalog();
  await catalog.fake.ensureTable(
    TABLE,
    [{ name: 'n', type: 'int32', nullable: false }],
    PRIMARY_RAW_TABLE_PROPERTIES,
  );
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams: 1 },
    catalog,
    factory: new FakeTransportFactory({ ackLatencyMs: 1 }),
    confirm: recordingTarget(),
    log: quiet,
  });
  return { catalog, sink };
}

type Flip = (c: DroppableCatalog) => void;
const alter =
  (change: Parameters<FakeCatalog['alter']>[1]): Flip =>
  (c) =>
    c.fake.alter(TABLE, change);

const FLIPS: [string, Flip, RegExp][] = [
  [
    'registered in the catalog',
    (c) => (c.dropped = true),
    /table main\.raw\.events is not registered/,
  ],
  [
    'Iceberg reads (IcebergCompatV2)',
    alter({ properties: { 'delta.enableIcebergCompatV2': 'false' } }),
    /delta\.enableIcebergCompatV2 is false/,
  ],
  [
    'Iceberg reads (UniForm)',
    alter({ properties: { 'delta.universalFormat.enabledFormats': 'hudi' } }),
    /delta\.universalFormat\.enabledFormats is hudi/,
  ],
  [
    'column mapping',
    alter({ properties: { 'delta.columnMapping.mode': 'none' } }),
    /delta\.columnMapping\.mode is none/,
  ],
  ['reader protocol version', alter({ minReaderVersion: 1 }), /minReaderVersion is 1/],
  ['writer protocol version', alter({ minWriterVersion: 6 }), /minWriterVersion is 6/],
  [
    'deletion vectors',
    alter({ properties: { 'delta.enableDeletionVectors': 'true' } }),
    /delta\.enableDeletionVectors is true; it must not be true/,
  ],
];

describe('ZerobusSink.checkRawPreconditions', () => {
  it.each(FLIPS)(
    're-checks the live table: %s flipped between two calls is refused, named',
    async (_, flip, named) => {
      const { catalog, sink } = await sinkOnRawTable();
      const before = catalog.fake.describes;
      await expect(sink.checkRawPreconditions()).resolves.toMatchObject({ name: TABLE });
      flip(catalog);
      const refused = sink.checkRawPreconditions();
      await expect(refused).rejects.toThrow(named);
      await expect(refused).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
      // Never cached: each call described the table.
      expect(catalog.fake.describes - before).toBe(2);
      await sink.close();
    },
  );

  it('refuses a sink without a catalog, saying so', async () => {
    const sink = new ZerobusSink<'secondary'>({
      id: ID,
      config: { table: TABLE, streams: 1 },
      fields: [{ name: 'n', type: 'int32', nullable: false }],
      factory: new FakeTransportFactory({ ackLatencyMs: 1 }),
      confirm: recordingTarget(),
      log: quiet,
    });
    await expect(sink.checkRawPreconditions()).rejects.toThrow(/has no catalog/);
    await sink.close();
  });

  it('keeps the primary-raw role refused to the plain sink even when the table qualifies: its rows are derived', async () => {
    const { sink } = await sinkOnRawTable();
    await sink.checkRawPreconditions();
    expect(() => assertPrimaryRaw(sink.descriptor)).toThrow(
      /cannot be read back by offset window \(.*derived rows, which cannot be replayed; .*ZerobusRawSink/,
    );
    await sink.close();
  });
});
