import { describe, expect, it } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { derivedCoverage, setAsideOf, sinkId } from '@thalweg/connector-core';
import { encodeIpcStream } from '@thalweg/stream-arrow';
import { FakeCatalog } from '../src/catalog/fake-catalog.js';
import { FakeTransportFactory } from '../src/fake-transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { batchOf, quiet, recordingTarget, spanAt } from './helpers.js';

const ID = sinkId('zerobus');
const TABLE = 'main.thalweg.events';

async function sinkWithTable(
  columns: { name: string; type: 'int64' | 'int32' | 'utf8'; nullable: boolean }[] | null,
) {
  const catalog = new FakeCatalog();
  if (columns !== null) await catalog.ensureTable(TABLE, columns, {});
  const factory = new FakeTransportFactory({ ackLatencyMs: 1 });
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams: 1 },
    catalog,
    factory,
    confirm: recordingTarget(),
    log: quiet,
  });
  return { sink, factory, catalog };
}

describe('ZerobusSink with a catalog', () => {
  it('takes the stream schema from the live table and reconciles each batch to it', async () => {
    const { sink, factory } = await sinkWithTable([
      { name: 'n', type: 'int64', nullable: false },
      { name: 'note', type: 'utf8', nullable: true },
    ]);
    await sink.submit(batchOf(3), spanAt(0), derivedCoverage(ID, spanAt(0)));
    await sink.flush();
    expect(factory.opened[0]!.spec.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'n:int64',
      'note:utf8',
    ]);
    const sent = tableFromIPC(factory.server.batches[0]);
    expect(sent.schema.fields.map((f) => f.name)).toEqual(['n', 'note']);
    expect([...sent.getChild('n')!]).toEqual([0n, 1n, 2n]);
    expect([...sent.getChild('note')!]).toEqual([null, null, null]);
    await sink.close();
  });

  it('refuses a batch that would lose data, naming the column, before anything is sent', async () => {
    const { sink, factory } = await sinkWithTable([
      { name: 'other', type: 'int32', nullable: true },
    ]);
    const refused = sink.submit(batchOf(1), spanAt(0), derivedCoverage(ID, spanAt(0)));
    await expect(refused).rejects.toThrow(/column n is not a column of the table/);
    // That batch alone: its caller quarantines it and the sink takes the next (ADR 0025).
    expect(setAsideOf(await refused.catch((e: unknown) => e))?.reason).toBe('poison');
    expect(factory.opened).toHaveLength(0);
    await sink.close();
  });

  it('fails loud when the table is not registered', async () => {
    const { sink } = await sinkWithTable(null);
    await expect(
      sink.submit(batchOf(1), spanAt(0), derivedCoverage(ID, spanAt(0))),
    ).rejects.toMatchObject({
      code: 'TWG_ZEROBUS_FATAL_CONFIG',
    });
    await sink.close();
  });

  it('sends an encoded batch that fits the table as its own bytes, and re-encodes one fitting changed', async () => {
    const exact = await sinkWithTable([{ name: 'n', type: 'int32', nullable: false }]);
    const bytes = encodeIpcStream(batchOf(2));
    const encoded = {
      kind: 'ipc-stream',
      ipc: bytes,
      numRows: 2,
      schema: batchOf(2).schema,
    } as const;
    await exact.sink.submit(encoded, spanAt(0), derivedCoverage(ID, spanAt(0)));
    await exact.sink.flush();
    expect(Buffer.from(exact.factory.server.batches[0]!).equals(bytes)).toBe(true);
    await exact.sink.close();

    const wider = await sinkWithTable([
      { name: 'n', type: 'int64', nullable: false },
      { name: 'note', type: 'utf8', nullable: true },
    ]);
    await wider.sink.submit(encoded, spanAt(0), derivedCoverage(ID, spanAt(0)));
    await wider.sink.flush();
    const sent = tableFromIPC(wider.factory.server.batches[0]);
    expect(sent.schema.fields.map((f) => f.name)).toEqual(['n', 'note']);
    expect([...sent.getChild('n')!]).toEqual([0n, 1n]);
    await wider.sink.close();
  });

  it('refuses as poison an encoded batch whose bytes do not decode, naming why', async () => {
    const { sink, factory } = await sinkWithTable([{ name: 'n', type: 'int64', nullable: false }]);
    const garbage = {
      kind: 'ipc-stream',
      ipc: Uint8Array.of(1, 2, 3),
      numRows: 1,
      schema: batchOf(1).schema,
    } as const;
    const refused = sink.submit(garbage, spanAt(0), derivedCoverage(ID, spanAt(0)));
    await expect(refused).rejects.toThrow(/an encoded batch does not decode: /);
    expect(setAsideOf(await refused.catch((e: unknown) => e))?.reason).toBe('poison');
    expect(factory.opened).toHaveLength(0);
    await sink.close();
  });
});
