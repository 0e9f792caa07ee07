import { Field, Int32, makeData, RecordBatch, Schema, Struct, Utf8 } from 'apache-arrow';
import { RECORD_ID_COLUMN, recordIdHex } from '@thalweg/connector-core';
import type { StreamField } from '../../src/transport.js';

/** The test table: the record id and the source offset. */
export const ORDERS_FIELDS: readonly StreamField[] = [
  { name: RECORD_ID_COLUMN, type: 'utf8', nullable: false },
  { name: 'n', type: 'int32', nullable: false },
];

export const ORDERS_SCHEMA = new Schema([
  new Field(RECORD_ID_COLUMN, new Utf8(), false),
  new Field('n', new Int32(), false),
]);

/** The record id of source offset `offset` (ADR 0003), as the rows carry it. */
export function idOf(offset: number): string {
  return recordIdHex({
    cluster: 'test',
    topic: 'orders',
    partition: 0,
    offset,
    payload: Buffer.from(`order ${offset}`),
  });
}

/** The rows of source offsets [start, end) with an explicit, non-null schema. */
export function ordersBatch(start: number, end: number): RecordBatch {
  const length = end - start;
  const ids = Array.from({ length }, (_, i) => Buffer.from(idOf(start + i), 'utf8'));
  const valueOffsets = new Int32Array(length + 1);
  ids.forEach((id, i) => (valueOffsets[i + 1] = (valueOffsets[i] ?? 0) + id.length));
  const idColumn = makeData({
    type: new Utf8(),
    length,
    valueOffsets,
    data: Buffer.concat(ids),
  });
  const nColumn = makeData({
    type: new Int32(),
    length,
    data: Int32Array.from({ length }, (_, i) => start + i),
  });
  return new RecordBatch(
    ORDERS_SCHEMA,
    makeData({ type: new Struct(ORDERS_SCHEMA.fields), length, children: [idColumn, nColumn] }),
  );
}
