import { RECORD_ID_COLUMN, recordId, recordIdHex } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  column,
  decodeIpcStream,
  encodeIpcStream,
  type RecordProvenance,
} from '../src/index.js';
import { readColumn } from './read-column.js';

const fields = [{ name: 'v', type: column.utf8, nullable: false }] as const;
const payloads = [Buffer.from('{"v":"a"}'), Buffer.from(''), Buffer.alloc(20_000, 7)];
const provenance: RecordProvenance = {
  cluster: 'kafka-prod',
  topic: 'orders',
  partition: 3,
  offsets: [41, 42, 2 ** 53 - 1],
  payloads,
};
const rows = [{ v: 'a' }, { v: 'b' }, { v: 'c' }];

function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected an ArrowBatchError');
}

describe('the _twg_record_id column', () => {
  it('is added last, non-nullable, as the ADR 0003 hex id of each row', () => {
    const schema = BatchSchema.define({ fields, recordId: 'hex' });
    const batch = decodeIpcStream(
      encodeIpcStream(new BatchBuilder(schema).fromRows(rows, provenance)),
      { expect: schema },
    );
    expect(batch.schema.fields.at(-1)?.name).toBe(RECORD_ID_COLUMN);
    expect(batch.schema.fields.at(-1)?.nullable).toBe(false);
    const ids = payloads.map((payload, i) =>
      recordIdHex({
        cluster: 'kafka-prod',
        topic: 'orders',
        partition: 3,
        offset: provenance.offsets[i]!,
        payload,
      }),
    );
    expect(readColumn(batch, RECORD_ID_COLUMN)).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9a-f]{32}$/);
  });

  it('can be the 16 raw bytes instead', () => {
    const schema = BatchSchema.define({ fields, recordId: 'binary' });
    const batch = new BatchBuilder(schema).fromColumns({ v: ['a', 'b', 'c'] }, provenance);
    const raw = payloads.map((payload, i) =>
      recordId({
        cluster: 'kafka-prod',
        topic: 'orders',
        partition: 3,
        offset: provenance.offsets[i]!,
        payload,
      }).toString('hex'),
    );
    expect(readColumn(batch, RECORD_ID_COLUMN)).toEqual(raw);
  });

  it('needs the provenance of every row, and only when the schema asks', () => {
    const withId = new BatchBuilder(BatchSchema.define({ fields, recordId: 'hex' }));
    expect(refusal(() => withId.fromRows(rows)).field).toBe(RECORD_ID_COLUMN);
    const short = refusal(() => withId.fromRows(rows, { ...provenance, offsets: [1, 2] }));
    expect(short.message).toMatch(/2 offsets and 3 payloads for 3 rows/);
    const negative = refusal(() => withId.fromRows(rows, { ...provenance, offsets: [1, -2, 3] }));
    expect([negative.field, negative.row]).toEqual([RECORD_ID_COLUMN, 1]);
    expect(refusal(() => withId.fromRows(rows, { ...provenance, topic: '' })).message).toMatch(
      /topic/,
    );
    const without = new BatchBuilder(BatchSchema.define({ fields }));
    expect(refusal(() => without.fromRows(rows, provenance)).message).toMatch(
      /no record id column/,
    );
  });
});
