import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { ArrowBatchError, BatchSchema, column, type BatchSchemaDefinition } from '../src/index.js';

function refusal(definition: unknown): ArrowBatchError {
  try {
    BatchSchema.define(definition as BatchSchemaDefinition);
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('BatchSchema', () => {
  it('produces an explicit Arrow schema: types, nullability, no metadata', () => {
    const schema = BatchSchema.define({
      fields: [
        { name: 'id', type: column.int64, nullable: false },
        { name: 'at', type: column.timestamp('ns'), nullable: true },
        { name: 'day', type: column.date32, nullable: false },
      ],
      recordId: 'hex',
    });
    expect(schema.arrow.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
      ['id', 'Int64', false],
      ['at', 'Timestamp<NANOSECOND, UTC>', true],
      ['day', 'Date32<DAY>', false],
      [RECORD_ID_COLUMN, 'Utf8', false],
    ]);
    expect(schema.arrow.metadata.size).toBe(0);
    expect(schema.width).toBe(4);
  });

  it('refuses what would be guessed or ambiguous, naming the path', () => {
    const cases: [unknown, string, RegExp][] = [
      [{ fields: [] }, 'fields', /non-empty/],
      [{ fields: [{ name: 'a', type: column.int64 }] }, 'fields[0].nullable', /stated/],
      [
        { fields: [{ name: '', type: column.int64, nullable: true }] },
        'fields[0].name',
        /non-empty/,
      ],
      [
        { fields: [{ name: 'a', type: { kind: 'dictionary' }, nullable: true }] },
        'fields[0].type.kind',
        /one of/,
      ],
      [
        { fields: [{ name: 'a', type: { kind: 'timestamp', unit: 'ms' }, nullable: true }] },
        'fields[0].type.unit',
        /"us" or "ns"/,
      ],
      [
        {
          fields: [
            { name: 'a', type: column.utf8, nullable: true },
            { name: 'a', type: column.utf8, nullable: true },
          ],
        },
        'fields[1].name',
        /twice/,
      ],
      [
        { fields: [{ name: RECORD_ID_COLUMN, type: column.utf8, nullable: false }] },
        'fields[0].name',
        /reserved/,
      ],
      [
        { fields: [{ name: 'a', type: column.utf8, nullable: true }], recordId: 'yes' },
        'recordId',
        /"hex"/,
      ],
    ];
    for (const [definition, field, reason] of cases) {
      const error = refusal(definition);
      expect(error.code).toBe('TWG_ARROW_SCHEMA_INVALID');
      expect(error.errorClass).toBe('fatal-config');
      expect(error.field).toBe(field);
      expect(error.message).toMatch(reason);
    }
  });
});
