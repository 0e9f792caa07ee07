import { describe, expect, it } from 'vitest';
import {
  Field,
  Int32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
} from 'apache-arrow';
import { checkDecodedBatch } from '../src/decoded-batch-check.js';
import { assertSchemaMatches } from '../src/schema-match.js';
import { BatchSchema } from '../src/batch-schema.js';

function int32Batch(
  values: Int32Array,
  nullBitmap: Uint8Array | undefined,
  nullCount: number,
  metadata?: Map<string, string>,
) {
  const schema = new Schema([new Field('n', new Int32(), true)], metadata);
  const child = makeData({
    type: new Int32(),
    length: values.length,
    data: values,
    nullBitmap,
    nullCount,
  });
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: values.length, children: [child] }),
  );
}

describe('checkDecodedBatch', () => {
  it('refuses a null count that disagrees with the validity bitmap, naming the column', () => {
    // 10 rows, bitmap marks rows 3 and 9 null (2 nulls), the count says 0 or 5.
    const bits = new Uint8Array([0b1111_0111, 0b0000_0001]);
    const values = Int32Array.from({ length: 10 }, (_, i) => i);
    expect(() => checkDecodedBatch(int32Batch(values, bits, 2))).not.toThrow();
    expect(() => checkDecodedBatch(int32Batch(values, bits, 5))).toThrow(
      /n.*declares 5 nulls but its validity bitmap holds 2/,
    );
  });
});

describe('assertSchemaMatches', () => {
  it('refuses schema metadata that our schemas never carry', () => {
    const expected = BatchSchema.define({
      fields: [{ name: 'n', type: { kind: 'int32' }, nullable: true }],
    });
    const batch = int32Batch(
      Int32Array.from([1]),
      undefined,
      0,
      new Map([['origin', 'elsewhere']]),
    );
    const decoded = new Table(batch).schema;
    expect(tableToIPC(new Table(batch)).byteLength).toBeGreaterThan(0);
    expect(() => assertSchemaMatches(decoded, expected)).toThrow(/carries metadata \(origin\)/);
  });
});
