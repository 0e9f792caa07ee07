import {
  derivedCoverage,
  offsetSpan,
  runDerivation,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { BatchSchema, column, isEncodedBatch } from '@thalweg/stream-arrow';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { fakeZerobus, fromJson, zerobus, type ZerobusPartOptions } from '../src/index.js';
import { partContextOf, textRecord } from './part-context.js';

const CLUSTER = 'prod-eu';
const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: true },
    { name: 'at', type: column.timestamp('us'), nullable: false },
  ],
  recordId: 'hex',
});
const record = (offset: number, value: string): SourceRecord =>
  textRecord(offset, value, 1_700_000_000_000 + offset);
const raw: SourceBatch = {
  span: offsetSpan('events', 3, 40, 44),
  records: [
    record(40, '{"id":1,"user":{"name":"a"}}'),
    record(41, '{"id":'),
    record(42, '{"user":{"name":"no id"}}'),
    record(43, '{"id":4}'),
  ],
};

const contextOf = () => partContextOf('zb-json', CLUSTER);

const common = {
  table: 'main.app.events',
  schema,
  streams: 1,
  retry: { baseDelayMs: 1 },
  rebuild: { baseDelayMs: 1 },
};
const fields = { name: 'user.name', at: { meta: 'timestamp' } } as const;

describe('zerobus() with a declared JSON mapping', () => {
  it('derives on a worker thread the rows, ids and refusals a row function derives here, and sends the bytes as they are', async () => {
    const transport = fakeZerobus({ ackLatencyMs: 1 });
    const ctx = contextOf();
    const part = zerobus({ ...common, transport, json: { fields } });
    const open = await part.open(ctx.context);
    const byHand = await zerobus({
      ...common,
      transport: fakeZerobus({ ackLatencyMs: 1 }),
      row: fromJson((v: { id?: unknown; user?: { name?: unknown } }, r) => ({
        id: v.id,
        name: v.user?.name,
        at: new Date(r.timestamp),
      })),
    }).open(contextOf().context);

    const derived = await runDerivation(open.derive, CLUSTER, raw);
    const want = await runDerivation(byHand.derive, CLUSTER, raw);
    const sorted = [...want.quarantined].sort((a, b) => a.offset - b.offset);
    expect(derived.quarantined).toEqual(sorted);
    expect(derived.quarantined.map((q) => [q.offset, q.reason])).toEqual([
      [41, 'decode'],
      [42, 'contract'],
    ]);
    const batch = derived.batch;
    if (batch === null || !isEncodedBatch(batch)) throw new Error('expected encoded rows');
    await open.sink.submit(batch, raw.span, derivedCoverage(ctx.context.id, raw.span));
    await open.sink.flush();
    expect(ctx.confirm.applied.map((a) => a.receipt.span)).toEqual([raw.span]);
    const sent = transport.server.batches[0];
    if (sent === undefined) throw new Error('nothing sent');
    expect(Buffer.from(sent).equals(Buffer.from(batch.ipc))).toBe(true);
    const rows = tableFromIPC(sent);
    expect([...(rows.getChild('id') ?? [])]).toEqual([1n, 4n]);
    expect([...(rows.getChild('name') ?? [])]).toEqual(['a', null]);
    if (want.batch === null || isEncodedBatch(want.batch)) throw new Error('expected built rows');
    expect([...(rows.getChild('_twg_record_id') ?? [])]).toEqual([
      ...(want.batch.getChild('_twg_record_id') ?? []),
    ]);
    expect(ctx.info).toEqual([]);
    await open.sink.close();
    await open.release?.();
    await byHand.sink.close();
  });

  it('derives the same bytes on the calling thread when told to', async () => {
    const onThread = await zerobus({
      ...common,
      transport: fakeZerobus({}),
      json: { fields },
    }).open(contextOf().context);
    const here = await zerobus({
      ...common,
      transport: fakeZerobus({}),
      json: { fields, onCallingThread: true },
    }).open(contextOf().context);
    const [a, b] = await Promise.all([
      runDerivation(onThread.derive, CLUSTER, raw),
      runDerivation(here.derive, CLUSTER, raw),
    ]);
    if (a.batch === null || b.batch === null) throw new Error('expected rows');
    if (!isEncodedBatch(a.batch) || !isEncodedBatch(b.batch)) throw new Error('expected bytes');
    expect(Buffer.from(a.batch.ipc).equals(Buffer.from(b.batch.ipc))).toBe(true);
    expect(a.quarantined).toEqual(b.quarantined);
    for (const o of [onThread, here]) {
      await o.sink.close();
      await o.release?.();
    }
  });

  it('refuses a mapping that names a field the schema lacks at declaration, and both ways at once at compile time', () => {
    expect(() =>
      zerobus({ ...common, transport: fakeZerobus({}), json: { fields: { nme: 'n' } } }),
    ).toThrow(/field "nme": the JSON field mapping names a field the schema does not have/);
    // @ts-expect-error: a row function and a JSON mapping are one or the other
    const both: ZerobusPartOptions = {
      ...common,
      transport: fakeZerobus({}),
      row: () => ({}),
      json: {},
    };
    // @ts-expect-error: one of them is required
    const neither: ZerobusPartOptions = { ...common, transport: fakeZerobus({}) };
    // …and a caller the compiler did not check is told at declaration.
    expect(() => zerobus(both)).toThrow(
      'zerobus: give row (a function) or json (a declared mapping); both given',
    );
    expect(() => zerobus(neither)).toThrow(/; neither given$/);
  });
});
