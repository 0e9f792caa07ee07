import { describe, expect, it } from 'vitest';
import {
  loadZerobusBinding,
  SUPPORTED_FIELD_TYPES,
  toNativeSchemaFields,
} from '../../src/databricks/index.js';
import type { StreamField } from '../../src/transport.js';

const binding = loadZerobusBinding();
const untyped = (fields: unknown[]) => fields as StreamField[];

describe('stream field types to the binding’s ArrowDataType', () => {
  it('maps every supported type onto the binding’s enum, keeping names and nullability', () => {
    const fields = SUPPORTED_FIELD_TYPES.map((type, i) => ({
      name: `c${i}`,
      type,
      nullable: i % 2 === 0,
    }));
    const native = toNativeSchemaFields(fields, binding);
    expect(native.map((f) => f.dataType)).toEqual([
      0, 1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
    ]);
    expect(native.map((f) => f.nullable)).toEqual(fields.map((f) => f.nullable));
    expect(native[11]).toEqual({ name: 'c11', dataType: 15, nullable: false });
  });

  it('refuses what the binding would silently turn into Utf8, naming the field', () => {
    const refuse = (fields: unknown[]) => () => toNativeSchemaFields(untyped(fields), binding);
    expect(refuse([{ name: 'id', type: 'uint64', nullable: false }])).toThrow(
      /fields\[0\] "id": type "uint64" is not supported .*supported: boolean, int8/,
    );
    expect(refuse([{ name: 'ts', type: 'timestamp', nullable: true }])).toThrow(/"ts": type/);
    expect(refuse([{ name: 'x', type: 'toString', nullable: true }])).toThrow(/"x": type/);
  });

  it('refuses malformed fields with the reason', () => {
    const refuse = (fields: unknown[]) => () => toNativeSchemaFields(untyped(fields), binding);
    expect(refuse([])).toThrow(/at least one field/);
    expect(refuse([{ name: '', type: 'utf8', nullable: true }])).toThrow(/fields\[0\]: name/);
    expect(
      refuse([
        { name: 'a', type: 'utf8', nullable: true },
        { name: 'a', type: 'int32', nullable: true },
      ]),
    ).toThrow(/fields\[1\] "a": the name appears twice/);
    expect(refuse([{ name: 'a', type: 'utf8' }])).toThrow(/"a": nullable must be true or false/);
    expect(refuse([{ name: 'a', type: 'utf8', nullable: false }])).not.toThrow();
  });

  it('refuses a binding whose enum lacks the member (a different SDK version)', () => {
    const old = { ArrowDataType: { Int32: 3 } };
    expect(() =>
      toNativeSchemaFields([{ name: 'd', type: 'date64', nullable: true }], old),
    ).toThrow(/"d": the native binding has no ArrowDataType.Date64/);
  });
});
