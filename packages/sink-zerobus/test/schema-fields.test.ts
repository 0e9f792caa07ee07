import { describe, expect, it } from 'vitest';
import type { DataType } from 'apache-arrow';
import {
  BatchBuilder,
  BatchSchema,
  column,
  decodeIpcStream,
  encodeIpcStream,
} from '@thalweg/stream-arrow';
import { fieldTypeOf } from '../src/arrow-fields.js';
import { checkStreamBatch } from '../src/stream-batch-check.js';
import { streamFieldsOf } from '../src/schema-fields.js';

const fields = [
  { name: 'b', type: column.boolean, nullable: true },
  { name: 'i', type: column.int32, nullable: false },
  { name: 'l', type: column.int64, nullable: false },
  { name: 'f', type: column.float64, nullable: true },
  { name: 's', type: column.utf8, nullable: false },
  { name: 'y', type: column.binary, nullable: true },
  { name: 'd', type: column.date32, nullable: true },
  { name: 'us', type: column.timestamp('us'), nullable: false },
  { name: 'ns', type: column.timestamp('ns'), nullable: true },
];
const row = {
  b: true,
  i: 1,
  l: 2n,
  f: 0.5,
  s: 'x',
  y: new Uint8Array([1]),
  d: 3,
  us: 4n,
  ns: null,
};
const provenance = {
  cluster: 'c',
  topic: 't',
  partition: 0,
  offsets: [7],
  payloads: [new Uint8Array([9])],
};

describe('streamFieldsOf', () => {
  it('maps every column kind to its stream field type, keeping nullability and order', () => {
    expect(streamFieldsOf(BatchSchema.define({ fields }))).toEqual([
      { name: 'b', type: 'boolean', nullable: true },
      { name: 'i', type: 'int32', nullable: false },
      { name: 'l', type: 'int64', nullable: false },
      { name: 'f', type: 'float64', nullable: true },
      { name: 's', type: 'utf8', nullable: false },
      { name: 'y', type: 'binary', nullable: true },
      { name: 'd', type: 'date32', nullable: true },
      { name: 'us', type: 'timestamp-micros', nullable: false },
      { name: 'ns', type: 'timestamp-nanos', nullable: true },
    ]);
  });

  it.each(['none', 'hex', 'binary'] as const)(
    'gives fields a batch of the schema (record id %s) always matches, as the binding checks it',
    (recordId) => {
      const schema = BatchSchema.define({ fields, recordId });
      const derived = streamFieldsOf(schema);
      expect(derived.map((f) => f.name)).toEqual(schema.arrow.fields.map((f) => f.name));
      if (recordId !== 'none')
        expect(derived.at(-1)).toEqual({
          name: '_twg_record_id',
          type: recordId === 'hex' ? 'utf8' : 'binary',
          nullable: false,
        });
      const batch = new BatchBuilder(schema).fromRows(
        [row],
        recordId === 'none' ? undefined : provenance,
      );
      const spec = { table: 'main.app.t', fields: derived };
      expect(() => checkStreamBatch(spec, encodeIpcStream(batch))).not.toThrow();
    },
  );
});

describe('fieldTypeOf', () => {
  it("maps a decoded batch's types as it maps built ones (apache-arrow compares types one way only)", () => {
    const schema = BatchSchema.define({ fields });
    const built = new BatchBuilder(schema).fromRows([row]);
    const decoded = decodeIpcStream(encodeIpcStream(built));
    const typesOf = (b: typeof built) =>
      b.schema.fields.map((f) => fieldTypeOf(f.type as DataType, f.name));
    expect(typesOf(decoded)).toEqual(typesOf(built));
    expect(typesOf(decoded)).toEqual(streamFieldsOf(schema).map((f) => f.type));
  });
});
