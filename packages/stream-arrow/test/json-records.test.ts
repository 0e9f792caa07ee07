import { offsetSpan, recordIdHex, type SourceRecord } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { BatchBuilder, BatchSchema, column, jsonRecordsToBatch } from '../src/index.js';

const enc = new TextEncoder();
const record = (offset: number, value: Uint8Array | string): SourceRecord => ({
  offset,
  key: null,
  value: typeof value === 'string' ? enc.encode(value) : value,
  timestamp: 0,
  headers: [],
});

const builder = new BatchBuilder(
  BatchSchema.define({
    fields: [
      { name: 'id', type: column.int64, nullable: false },
      { name: 'name', type: column.utf8, nullable: true },
    ],
    recordId: 'hex',
  }),
);

describe('jsonRecordsToBatch', () => {
  it('builds the accepted records and quarantines the others with decode or contract', () => {
    const records = [
      record(10, '{"id":1,"name":"a"}'),
      record(11, '{"id":2'),
      record(12, new Uint8Array([0x7b, 0xff, 0x7d])),
      record(13, '{"name":"no id"}'),
      record(14, '{"id":3,"name":null}'),
    ];
    const { batch, quarantined } = jsonRecordsToBatch(builder, 'cluster-a', {
      span: offsetSpan('t', 2, 10, 15),
      records,
    });
    expect(quarantined.map((r) => [r.offset, r.reason])).toEqual([
      [11, 'decode'],
      [12, 'decode'],
      [13, 'contract'],
    ]);
    expect(quarantined[2]?.detail).toMatch(/field "id"/);
    expect(batch?.numRows).toBe(2);
    expect(batch?.getChild('id')?.toArray()).toEqual(new BigInt64Array([1n, 3n]));
    const ids = batch?.getChild('_twg_record_id')?.toArray() as string[] | undefined;
    const id = (offset: number, payload: Uint8Array) =>
      recordIdHex({ cluster: 'cluster-a', topic: 't', partition: 2, offset, payload });
    expect([...(ids ?? [])]).toEqual([
      id(10, records[0]?.value ?? new Uint8Array()),
      id(14, records[4]?.value ?? new Uint8Array()),
    ]);
  });

  it('returns no batch when every record is quarantined, and maps rows when asked', () => {
    const none = jsonRecordsToBatch(builder, 'c', {
      span: offsetSpan('t', 0, 0, 1),
      records: [record(0, 'nope')],
    });
    expect(none.batch).toBeNull();
    const mapped = jsonRecordsToBatch(
      builder,
      'c',
      { span: offsetSpan('t', 0, 0, 1), records: [record(0, '{"n":5}')] },
      (v) => ({ id: (v as { n: number }).n, name: 'mapped' }),
    );
    expect(mapped.batch?.getChild('name')?.get(0)).toBe('mapped');
  });
});
