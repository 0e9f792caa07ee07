import {
  fromJson,
  runDerivation,
  runSyncDerivation,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  encodeIpcStream,
  isEncodedBatch,
  jsonDerivation,
  jsonRow,
  rowsToBatch,
} from '../../src/index.js';

const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: { kind: 'utf8' }, nullable: false },
    { name: 'amount', type: { kind: 'int64' }, nullable: true },
    { name: 'at', type: { kind: 'timestamp', unit: 'us' }, nullable: false },
    { name: 'source_offset', type: { kind: 'int64' }, nullable: false },
  ],
  recordId: 'hex',
});
const fields = {
  amount: 'order.amount',
  at: { meta: 'timestamp' },
  source_offset: { meta: 'offset' },
} as const;

const enc = new TextEncoder();
const record = (offset: number, text: string): SourceRecord => ({
  offset,
  key: null,
  value: enc.encode(text),
  timestamp: 1_700_000_000_000 + offset,
  headers: [],
});
const batch: SourceBatch = {
  span: { topic: 'orders', partition: 3, start: 40, end: 47 },
  records: [
    record(40, '{"id":"a","order":{"amount":5}}'),
    record(41, 'not json'),
    record(42, '{"order":{"amount":6}}'), // no id: contract
    record(43, '{"id":"b"}'), // no amount: null
    record(44, '{"id":"c","order":{"amount":"seven"}}'), // wrong type: contract
    { ...record(45, ''), tombstone: true },
    record(46, '{"id":"ø€𝄞","order":{"amount":9}}'),
  ],
};

/** The same mapping written as a function, run on the calling thread by rowsToBatch. */
const byHand = rowsToBatch(
  new BatchBuilder(schema),
  fromJson((v: { id?: unknown; order?: { amount?: unknown } }, r) => ({
    id: v.id,
    amount: v.order?.amount,
    at: new Date(r.timestamp),
    source_offset: r.offset,
  })),
  'prod-eu',
);

describe('jsonDerivation', () => {
  it('on its thread, makes the bytes and the refusals that the same mapping written by hand makes here', async () => {
    const lines: string[] = [];
    const json = jsonDerivation({ schema, fields, cluster: 'prod-eu', log: (l) => lines.push(l) });
    const want = runSyncDerivation(byHand, 'prod-eu', batch);
    const got = await runDerivation(json.derive, 'prod-eu', batch);
    if (got.batch === null || want.batch === null) throw new Error('expected rows');
    expect(isEncodedBatch(got.batch)).toBe(true);
    expect(got.batch.numRows).toBe(3);
    expect(got.batch.schema).toBe(schema.arrow);
    expect(Buffer.from(got.batch.ipc).equals(encodeIpcStream(want.batch))).toBe(true);
    // In offset order; rowsToBatch lists its decode refusals before its contract ones.
    const byOffset = [...want.quarantined].sort((a, b) => a.offset - b.offset);
    expect(got.quarantined).toEqual(byOffset);
    expect(got.quarantined.map((q) => [q.offset, q.reason])).toEqual([
      [41, 'decode'],
      [42, 'contract'],
      [44, 'contract'],
      [45, 'decode'],
    ]);
    expect(got.quarantined[1]?.detail).toMatch(/field "id"/);
    const table = tableFromIPC(got.batch.ipc);
    expect(table.getChild('id')?.toArray()).toEqual(['a', 'b', 'ø€𝄞']);
    expect([...(table.getChild('amount') ?? [])]).toEqual([5n, null, 9n]);
    await json.close();
    expect(lines).toEqual([]);
  });

  it('makes the same bytes on the calling thread, and after its thread was closed', async () => {
    const onThread = jsonDerivation({ schema, fields, cluster: 'prod-eu', log: () => undefined });
    const here = jsonDerivation({
      schema,
      fields,
      cluster: 'prod-eu',
      log: () => undefined,
      onCallingThread: true,
    });
    const a = await runDerivation(onThread.derive, 'prod-eu', batch);
    const b = runDerivation(here.derive, 'prod-eu', batch);
    await onThread.close();
    const c = await runDerivation(onThread.derive, 'prod-eu', batch);
    for (const other of [await b, c]) {
      expect(other.quarantined).toEqual(a.quarantined);
      if (other.batch === null || a.batch === null) throw new Error('expected rows');
      expect(Buffer.from(other.batch.ipc).equals(Buffer.from(a.batch.ipc))).toBe(true);
    }
  });

  it('answers null when it refused every record, and hashes ids from the cluster it was given', async () => {
    const json = jsonDerivation({ schema, fields, cluster: 'prod-us', log: () => undefined });
    const none = await runDerivation(json.derive, 'prod-us', {
      span: batch.span,
      records: [record(40, '[]'), record(41, '{')],
    });
    expect(none.batch).toBeNull();
    expect(none.quarantined.map((q) => q.reason)).toEqual(['contract', 'decode']);
    const one = { span: batch.span, records: [record(40, '{"id":"a"}')] };
    const us = await runDerivation(json.derive, 'prod-us', one);
    const eu = runSyncDerivation(byHand, 'prod-eu', one);
    if (us.batch === null || eu.batch === null) throw new Error('expected rows');
    const idOf = (ipc: Uint8Array) =>
      tableFromIPC(ipc).getChild('_twg_record_id')?.get(0) as string;
    expect(idOf(us.batch.ipc)).toMatch(/^[0-9a-f]{32}$/);
    expect(idOf(us.batch.ipc)).not.toBe(idOf(encodeIpcStream(eu.batch)));
    await json.close();
  });
});

describe('jsonRow', () => {
  it("takes each column from its path, its metadata or the payload's key of its name", () => {
    const row = jsonRow(schema, {
      amount: ['order', 'amount'],
      at: { meta: 'timestamp' },
      source_offset: { meta: 'offset' },
    });
    const meta = { offset: 9, timestamp: 1000, topic: 't', partition: 1 };
    expect(row({ id: 'x', order: { amount: 2 } }, meta)).toEqual({
      id: 'x',
      amount: 2,
      at: new Date(1000),
      source_offset: 9,
    });
    // Not an object, or a prototype's property: the column is missing, never inherited.
    expect(row({ id: 'y', order: 'flat' }, meta)['amount']).toBeUndefined();
    expect(row(JSON.parse('{"order":{}}'), meta)['id']).toBeUndefined();
    expect(
      jsonRow(schema, { amount: 'order.constructor' })({ order: {} }, meta)['amount'],
    ).toBeUndefined();
  });

  it('refuses a mapping naming a field the schema lacks, an empty key or unknown metadata, naming the field', () => {
    const refusal = (f: Parameters<typeof jsonRow>[1]) => {
      try {
        jsonRow(schema, f);
      } catch (error) {
        if (error instanceof ArrowBatchError) return [error.field, error.message];
        throw error;
      }
      return null;
    };
    expect(refusal({ amout: 'amount' })?.[0]).toBe('amout');
    expect(refusal({ amount: 'order..amount' })).toEqual([
      'amount',
      'TWG_ARROW_INPUT_INVALID: field "amount": the mapping\'s path "order..amount" holds an empty key',
    ]);
    // What an untyped caller (a configuration file) might give.
    expect(refusal({ amount: 5 as unknown as string })?.[1]).toBe(
      'TWG_ARROW_INPUT_INVALID: field "amount": the mapping must be a path or { meta }, not 5',
    );
    expect(refusal({ amount: ['order', 7] as unknown as string[] })?.[0]).toBe('amount');
    expect(refusal({ at: { meta: 'key' as 'offset' } })?.[1]).toMatch(
      /field "at": the mapping's meta must be one of/,
    );
    expect(() =>
      jsonDerivation({ schema, fields: { nope: 'x' }, cluster: 'c', log: () => undefined }),
    ).toThrow(/field "nope"/);
  });
});
