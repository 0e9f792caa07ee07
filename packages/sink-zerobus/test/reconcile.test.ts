import { describe, expect, it } from 'vitest';
import {
  Field,
  Int32,
  Int64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { reconcile } from '../src/reconcile.js';
import { reconcileBatch } from '../src/reconcile-apply.js';
import type { TableColumn } from '../src/catalog/catalog.js';

const f = (name: string, type: TableColumn['type'], nullable = true, nullCount = 0) => ({
  name,
  type,
  nullable,
  nullCount,
});

describe('reconcile', () => {
  it('accepts an exact match', () => {
    expect(
      reconcile([f('a', 'int64', false)], [{ name: 'a', type: 'int64', nullable: false }]),
    ).toEqual({ kind: 'exact' });
  });

  it('widens losslessly and fills missing nullable columns', () => {
    const plan = reconcile(
      [f('a', 'int32')],
      [
        { name: 'a', type: 'int64', nullable: true },
        { name: 'b', type: 'utf8', nullable: true },
      ],
    );
    expect(plan).toEqual({
      kind: 'adapt',
      steps: [
        { kind: 'widen', name: 'a', from: 'int32', to: 'int64' },
        { kind: 'fill-null', name: 'b', type: 'utf8' },
      ],
    });
  });

  it.each([
    [
      [f('a', 'int64'), f('extra', 'utf8')],
      [{ name: 'a', type: 'int64', nullable: true }],
      'extra',
      /drop its values/,
    ],
    [
      [f('a', 'int64')],
      [{ name: 'a', type: 'int32', nullable: true }],
      'a',
      /cannot be converted without loss/,
    ],
    [[f('a', 'utf8')], [{ name: 'a', type: 'int64', nullable: true }], 'a', /cannot be converted/],
    [
      [f('a', 'int64', true, 3)],
      [{ name: 'a', type: 'int64', nullable: false }],
      'a',
      /holds 3 nulls/,
    ],
    [
      [f('a', 'int64')],
      [
        { name: 'a', type: 'int64', nullable: true },
        { name: 'b', type: 'int64', nullable: false },
      ],
      'b',
      /NOT NULL in the table and missing/,
    ],
  ] as const)(
    'refuses what would lose data, naming the column (%#)',
    (batch, table, column, reason) => {
      const plan = reconcile(batch, table);
      expect(plan).toMatchObject({ kind: 'refuse', column });
      expect(plan.kind === 'refuse' ? plan.reason : '').toMatch(reason);
    },
  );

  it('lets a nullable batch column without nulls into a NOT NULL column', () => {
    expect(
      reconcile([f('a', 'int64', true, 0)], [{ name: 'a', type: 'int64', nullable: false }]).kind,
    ).toBe('adapt');
  });
});

describe('reconcileBatch', () => {
  it('rebuilds the batch in table order with widened and null-filled columns', () => {
    const a = vectorFromArray([1, null, 3], new Int32());
    const schema = new Schema([new Field('a', new Int32(), true)]);
    const batch = new RecordBatch(
      schema,
      makeData({ type: new Struct(schema.fields), length: 3, children: [a.data[0]!] }),
    );
    const out = reconcileBatch(batch, [
      { name: 'b', type: 'utf8', nullable: true },
      { name: 'a', type: 'int64', nullable: true },
    ]);
    expect(out.schema.fields.map((x) => [x.name, String(x.type)])).toEqual([
      ['b', String(new Utf8())],
      ['a', String(new Int64())],
    ]);
    expect([...out.getChild('a')!]).toEqual([1n, null, 3n]);
    expect([...out.getChild('b')!]).toEqual([null, null, null]);
  });

  it('throws a poison-batch error naming the column', () => {
    const schema = new Schema([new Field('x', new Int32(), false)]);
    const batch = new RecordBatch(
      schema,
      makeData({
        type: new Struct(schema.fields),
        length: 1,
        children: [vectorFromArray([1], new Int32()).data[0]!],
      }),
    );
    expect(() => reconcileBatch(batch, [{ name: 'a', type: 'int32', nullable: true }])).toThrow(
      /column x is not a column of the table/,
    );
  });
});
