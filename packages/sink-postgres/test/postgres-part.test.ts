import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  offsetSpan,
  RecordRefused,
  recordId,
  runSyncDerivation,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { postgres, type PgTableSpec } from '../src/index.js';
import { rowDerivation } from '../src/postgres-part.js';

const TABLE: PgTableSpec = {
  name: 'events',
  columns: [
    { name: 'n', type: 'bigint', nullable: false },
    { name: 'label', type: 'text', nullable: true },
  ],
};

function record(offset: number, text: string): SourceRecord {
  return {
    offset,
    key: null,
    value: Buffer.from(text),
    timestamp: 1_700_000_000_000,
    headers: [],
  };
}

function batch(topic: string, partition: number, start: number, texts: string[]): SourceBatch {
  return {
    span: offsetSpan(topic, partition, start, start + texts.length),
    records: texts.map((t, i) => record(start + i, t)),
  };
}

/** `{"n": 1, "label": "a"}` -> [1, "a"]; anything else throws from JSON.parse. */
function jsonRow(r: SourceRecord): readonly unknown[] {
  const v = JSON.parse(Buffer.from(r.value).toString('utf8')) as { n: number; label: string };
  return [v.n, v.label];
}

describe('postgres(): the derivation from raw', () => {
  it('keys every row by the id raw gives the record (cluster, topic, partition, offset, payload)', () => {
    const raw = batch('orders', 3, 40, ['{"n":1,"label":"a"}', '{"n":2,"label":"b"}']);
    const out = runSyncDerivation(rowDerivation(TABLE, jsonRow), 'prod-eu', raw);
    expect(out.quarantined).toEqual([]);
    expect(out.batch?.rows.map((r) => r.values)).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    const expected = raw.records.map((r) =>
      recordId({
        cluster: 'prod-eu',
        topic: 'orders',
        partition: 3,
        offset: r.offset,
        payload: r.value,
      }),
    );
    expect(out.batch?.rows.map((r) => Buffer.from(r.recordId).toString('hex'))).toEqual(
      expected.map((id) => id.toString('hex')),
    );
    // Another cluster is another id: the context's cluster is the one hashed.
    const other = runSyncDerivation(rowDerivation(TABLE, jsonRow), 'prod-us', raw);
    expect(Buffer.from(other.batch?.rows[0]?.recordId ?? []).toString('hex')).not.toBe(
      expected[0]?.toString('hex'),
    );
  });

  it('gives row the partition each record was read from', () => {
    const row = (r: SourceRecord, from: { topic: string; partition: number }) => [
      r.offset,
      `${from.topic}/${from.partition}`,
    ];
    const out = runSyncDerivation(
      rowDerivation(TABLE, row),
      'c',
      batch('orders', 7, 3, ['x', 'y']),
    );
    expect(out.batch?.rows.map((r) => r.values)).toEqual([
      [3, 'orders/7'],
      [4, 'orders/7'],
    ]);
  });

  it('quarantines a record whose row throws as decode, with the offset and message, and keeps the rest', () => {
    const raw = batch('orders', 0, 10, ['{"n":1,"label":"a"}', 'not json', '{"n":3,"label":"c"}']);
    const out = runSyncDerivation(rowDerivation(TABLE, jsonRow), 'c', raw);
    expect(out.quarantined).toHaveLength(1);
    expect(out.quarantined[0]?.offset).toBe(11);
    expect(out.quarantined[0]?.reason).toBe('decode');
    expect(out.quarantined[0]?.detail).toMatch(/JSON/);
    expect(out.batch?.rows.map((r) => r.values[0])).toEqual([1, 3]);
  });

  it('honours the reason of a RecordRefused', () => {
    const row = (r: SourceRecord): readonly unknown[] => {
      if (r.offset === 1) throw new RecordRefused('dq', 'n must be positive');
      return jsonRow(r);
    };
    const raw = batch('orders', 0, 0, ['{"n":1,"label":"a"}', '{"n":-1,"label":"b"}']);
    const out = runSyncDerivation(rowDerivation(TABLE, row), 'c', raw);
    expect(out.quarantined).toEqual([{ offset: 1, reason: 'dq', detail: 'n must be positive' }]);
    expect(out.batch?.rows).toHaveLength(1);
  });

  it('quarantines a row of the wrong width as contract, naming the offset and both counts', () => {
    const row = (r: SourceRecord): readonly unknown[] =>
      r.offset === 5 ? [1, 'a', 'extra'] : [2, 'b'];
    const raw = batch('orders', 0, 4, ['x', 'y']);
    const out = runSyncDerivation(rowDerivation(TABLE, row), 'c', raw);
    expect(out.quarantined).toHaveLength(1);
    const [note] = out.quarantined;
    expect(note?.offset).toBe(5);
    expect(note?.reason).toBe('contract');
    expect(note?.detail).toContain('offset 5');
    expect(note?.detail).toContain('3 values');
    expect(note?.detail).toContain('2 columns');
  });

  it('quarantines a row that is not an array as contract', () => {
    const row = (() => ({ n: 1 })) as unknown as (r: SourceRecord) => readonly unknown[];
    const out = runSyncDerivation(rowDerivation(TABLE, row), 'c', batch('orders', 0, 0, ['x']));
    expect(out.quarantined[0]?.reason).toBe('contract');
    expect(out.quarantined[0]?.detail).toContain('returned object');
  });

  it('derives null when every record was quarantined', () => {
    const out = runSyncDerivation(
      rowDerivation(TABLE, jsonRow),
      'c',
      batch('orders', 0, 0, ['x', 'y']),
    );
    expect(out.batch).toBeNull();
    expect(out.quarantined.map((q) => q.offset)).toEqual([0, 1]);
  });
});

describe('postgres(): the declaration', () => {
  it('is a secondary part carrying its lane settings', () => {
    const part = postgres({
      connectionString: 'postgres://nowhere/db',
      table: TABLE,
      row: jsonRow,
      lane: { maxQueuedBatches: 8 },
    });
    expect(part.role).toBe('secondary');
    expect(part.lane).toEqual({ maxQueuedBatches: 8 });
  });

  it('refuses a bad table at declaration, naming the field', () => {
    const bad = { ...TABLE, columns: [{ name: 'n', type: 'numeric', nullable: false }] };
    expect(() =>
      postgres({
        connectionString: 'postgres://nowhere/db',
        table: bad as unknown as PgTableSpec,
        row: jsonRow,
      }),
    ).toThrow(ConfigError);
    expect(() =>
      postgres({
        connectionString: 'postgres://nowhere/db',
        table: bad as unknown as PgTableSpec,
        row: jsonRow,
      }),
    ).toThrow(/postgres\.table\.columns\[0\]\.type/);
  });

  it('refuses a row that is not a function, naming it', () => {
    const row = 'n, label' as unknown as (r: SourceRecord) => readonly unknown[];
    expect(() => postgres({ connectionString: 'postgres://x/db', table: TABLE, row })).toThrow(
      /postgres\.row/,
    );
  });

  it('needs a table and a row, and takes no id, confirm or log (compile-time)', () => {
    const row = jsonRow;
    // @ts-expect-error a part without row
    const noRow = () => postgres({ connectionString: 'postgres://x/db', table: TABLE });
    // @ts-expect-error a part without table
    const noTable = () => postgres({ connectionString: 'postgres://x/db', row });
    const withId = () =>
      postgres({
        // @ts-expect-error the id is the key the part is declared under
        id: 'pg',
        connectionString: 'postgres://x/db',
        table: TABLE,
        row,
      });
    const withLog = () =>
      // @ts-expect-error the part logs through the topology's logger
      postgres({ log: () => undefined, connectionString: 'postgres://x/db', table: TABLE, row });
    expect(noRow).toThrow(/postgres\.row/);
    expect(noTable).toThrow(/postgres\.table/);
    // JavaScript callers are refused at run time, naming the field.
    expect(withId).toThrow(/postgres\.id: is not an option of postgres\(\): the id is the key/);
    expect(withLog).toThrow(/postgres\.log/);
  });
});
