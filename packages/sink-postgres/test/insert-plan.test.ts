import { describe, expect, it } from 'vitest';
import { InsertPlanner, MAX_PARAMETERS } from '../src/insert-plan.js';
import type { PgBatch, PgTableSpec } from '../src/index.js';

const SPEC: PgTableSpec = {
  name: 'we"ird table',
  schema: 'my schema',
  columns: [
    { name: 'n', type: 'bigint', nullable: false },
    { name: 'doc', type: 'jsonb', nullable: true },
    { name: 'raw', type: 'bytea', nullable: true },
  ],
};

function batch(rows: number, from = 0): PgBatch {
  return {
    rows: Array.from({ length: rows }, (_, i) => ({
      recordId: new Uint8Array(16).fill(from + i),
      values: [from + i, [1, { a: 'x' }], new Uint8Array([1, 2, 3])],
    })),
  };
}

describe('InsertPlanner', () => {
  it('quotes identifiers and deduplicates on the record id', () => {
    const plan = new InsertPlanner(SPEC, 'unnest', 100).plan([batch(2)]);
    const text = plan.chunks[0]!.query.text;
    expect(text).toContain(
      'insert into "my schema"."we""ird table" ("_twg_record_id", "n", "doc", "raw")',
    );
    expect(text).toContain('unnest($1::bytea[], $2::bigint[], $3::jsonb[], $4::bytea[])');
    expect(text).toMatch(/on conflict \("_twg_record_id"\) do nothing$/);
  });

  it('chunks rows across batches in order, by rowsPerStatement', () => {
    const planner = new InsertPlanner(SPEC, 'unnest', 4);
    const plan = planner.plan([batch(3, 0), batch(6, 3)]);
    expect(plan.chunks.map((c) => c.rows)).toEqual([4, 4, 1]);
    expect(plan.chunks[0]!.segments).toEqual([
      { batch: 0, firstRow: 0, rows: 3 },
      { batch: 1, firstRow: 0, rows: 1 },
    ]);
    const ns = plan.chunks.flatMap((c) => c.query.values[1] as number[]);
    expect(ns).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(plan.bytes).toHaveLength(2);
    expect(plan.bytes[1]).toBeGreaterThan(plan.bytes[0]!);
  });

  it('keeps a VALUES statement under the 65 535 parameter limit', () => {
    const planner = new InsertPlanner(SPEC, 'values', 1_000_000);
    expect(planner.rowsPerStatement).toBe(Math.floor(MAX_PARAMETERS / 4));
    const plan = planner.plan([batch(planner.rowsPerStatement + 5)]);
    expect(plan.chunks.map((c) => c.rows)).toEqual([planner.rowsPerStatement, 5]);
    for (const c of plan.chunks) expect(c.query.values.length).toBeLessThanOrEqual(MAX_PARAMETERS);
    expect(plan.chunks[1]!.query.text).toContain('($17::bytea,$18::bigint,$19::jsonb,$20::bytea)');
  });

  it('serialises jsonb values itself, so a JS array stays a JSON array', () => {
    const plan = new InsertPlanner(SPEC, 'values', 10).plan([batch(1)]);
    const values = plan.chunks[0]!.query.values;
    expect(values[2]).toBe('[1,{"a":"x"}]');
    expect(Buffer.isBuffer(values[3])).toBe(true);
    const odd = new InsertPlanner(SPEC, 'values', 10).plan([
      { rows: [{ recordId: new Uint8Array(16), values: [1, { n: 1n }, null] }] },
    ]);
    expect(odd.chunks[0]!.query.values[2]).toMatch(/not representable as JSON/);
  });

  it('names the same text with the same statement name, and different texts differently', () => {
    const planner = new InsertPlanner(SPEC, 'values', 3);
    const plan = planner.plan([batch(7)]);
    const [a, b, c] = plan.chunks.map((x) => x.query);
    expect(a!.name).toBe(b!.name);
    expect(c!.name).not.toBe(a!.name);
  });

  it('locates a refused parameter: its column, and for VALUES its batch and row', () => {
    const values = new InsertPlanner(SPEC, 'values', 4);
    const plan = values.plan([batch(3), batch(3, 3)]);
    // Chunk 0 holds rows 0-2 of batch 0 and row 0 of batch 1; 4 parameters per row.
    expect(values.locate(plan.chunks[0]!, 14)).toEqual({ column: 'n', batch: 1, row: 0 });
    expect(values.locate(plan.chunks[1]!, 7)).toEqual({ column: 'doc', batch: 1, row: 2 });
    const unnest = new InsertPlanner(SPEC, 'unnest', 4);
    expect(unnest.locate(unnest.plan([batch(3)]).chunks[0]!, 2)).toEqual({ column: 'n' });
    expect(unnest.locate(unnest.plan([batch(3)]).chunks[0]!, 9)).toBeNull();
  });
});
