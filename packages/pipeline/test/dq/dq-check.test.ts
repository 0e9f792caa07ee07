import type { SourceBatch, SourceRecord } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checked, dqChecksOf, secondary, type Derived } from '../../src/index.js';

interface Order {
  readonly id: string;
  readonly amount: number;
  readonly lines: readonly { readonly qty: number }[];
}

const record = (offset: number, value: unknown): SourceRecord => ({
  offset,
  key: null,
  value: new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value)),
  timestamp: 0,
  headers: [],
});

const batchOf = (...values: unknown[]): SourceBatch => ({
  span: { topic: 't', partition: 0, start: 10, end: 10 + values.length },
  records: values.map((v, i) => record(10 + i, v)),
});

const orderOf = (r: SourceRecord): Order => JSON.parse(new TextDecoder().decode(r.value)) as Order;

const orderSchema = z.object({
  amount: z.number().nonnegative(),
  lines: z.array(z.object({ qty: z.number().int().positive() })),
});

/** The rows built, each with the offset of its record. */
const derive = checked(orderOf)
  .check('positive amount', (o) => o.amount > 0 || `amount ${o.amount} is not positive`)
  .schema('order shape', orderSchema)
  .build((rows, passing) => rows.map((o, i) => ({ id: o.id, offset: passing.records[i]?.offset })));

const ok = { id: 'a', amount: 5, lines: [{ qty: 1 }] };

describe('checked derivations', () => {
  it('quarantine a row failing a predicate with reason dq, naming the check and its reason', () => {
    const out = derive(batchOf(ok, { ...ok, id: 'b', amount: 0 }));
    expect(out.batch).toEqual([{ id: 'a', offset: 10 }]);
    expect(out.quarantined).toEqual([
      {
        offset: 11,
        reason: 'dq',
        detail: "dq check 'positive amount' failed: amount 0 is not positive",
      },
    ]);
    expect(out.dq).toEqual({
      'positive amount': { passed: 1, failed: 1 },
      'order shape': { passed: 2, failed: 0 },
    });
  });

  it('quarantine a row a zod schema refuses, naming the failing field path', () => {
    const out = derive(batchOf({ ...ok, lines: [{ qty: 1 }, { qty: 0 }] }, ok));
    expect(out.batch).toEqual([{ id: 'a', offset: 11 }]);
    expect(out.quarantined).toHaveLength(1);
    expect(out.quarantined[0]).toMatchObject({ offset: 10, reason: 'dq' });
    expect(out.quarantined[0]?.detail).toMatch(/^dq check 'order shape' failed at lines\.1\.qty: /);
    expect(out.dq?.['order shape']).toEqual({ passed: 1, failed: 1 });
  });

  it('name every check a row fails in its one note, and count each check on every row', () => {
    const out = derive(batchOf({ id: 'x', amount: -1, lines: [] }, { id: 'y', amount: 1 }));
    expect(out.batch).toBeNull();
    expect(out.quarantined.map((n) => n.detail)).toEqual([
      expect.stringMatching(
        /^dq check 'positive amount' failed: amount -1 .*; dq check 'order shape' failed at amount: /,
      ),
      expect.stringMatching(/^dq check 'order shape' failed at lines: /),
    ]);
    expect(out.dq).toEqual({
      'positive amount': { passed: 1, failed: 1 },
      'order shape': { passed: 0, failed: 2 },
    });
  });

  it('take a check that throws as a failed check with the thrown message', () => {
    const throwing = checked(orderOf)
      .check('lookup', (o) => {
        if (o.id === 'boom') throw new Error('lookup table missing');
        return true;
      })
      .build((rows) => rows.map((o) => o.id));
    let out: Derived<string[]> | undefined;
    expect(() => (out = throwing(batchOf(ok, { ...ok, id: 'boom' })))).not.toThrow();
    expect(out?.batch).toEqual(['a']);
    expect(out?.quarantined).toEqual([
      { offset: 11, reason: 'dq', detail: "dq check 'lookup' threw: lookup table missing" },
    ]);
    expect(out?.dq).toEqual({ lookup: { passed: 1, failed: 1 } });
  });

  it('quarantine a record its row cannot be made of as decode, and leave out a null row', () => {
    const rows = checked((r) => (r.offset === 12 ? null : orderOf(r)))
      .check('positive amount', (o) => o.amount > 0)
      .build((all) => all.length);
    const out = rows(batchOf(ok, '{not json', ok));
    expect(out.batch).toBe(1);
    expect(out.quarantined).toEqual([
      { offset: 11, reason: 'decode', detail: expect.stringMatching(/JSON/) as unknown },
    ]);
    // Neither the undecodable record nor the left-out one was checked.
    expect(out.dq).toEqual({ 'positive amount': { passed: 1, failed: 0 } });
  });

  it('say false plainly when a predicate gives no reason', () => {
    const plain = checked(orderOf)
      .check('never', () => false)
      .build((rows) => rows);
    expect(plain(batchOf(ok)).quarantined[0]?.detail).toBe("dq check 'never' failed");
  });

  it('refuse two checks of one name, and name their checks for the pipeline', () => {
    const base = checked(orderOf).check('a', () => true);
    expect(() => base.check('a', () => true)).toThrow(/'a' is declared twice/);
    expect(() => base.check('', () => true)).toThrow(/needs a name/);
    expect(dqChecksOf(derive)).toEqual(['positive amount', 'order shape']);
    expect(dqChecksOf((b: SourceBatch) => ({ batch: b, quarantined: [] }))).toEqual([]);
  });

  it('type the checks by the row: a check on another row type does not compile', () => {
    const rows = checked(orderOf);
    // @ts-expect-error a predicate on a row of another type
    rows.check('wrong row', (r: { name: string }) => r.name.length > 0);
    // @ts-expect-error a schema whose input the row is not (amount is a number)
    rows.schema('wrong schema', z.object({ amount: z.string() }));
    // @ts-expect-error a schema on a field the row does not have
    rows.schema('no such field', z.object({ name: z.string() }));
    // A schema that looks at part of the row fits, and so does one that narrows a field.
    rows.schema('part', z.object({ id: z.string() }));
    rows.schema(
      'narrows',
      z.object({ id: z.enum(['a', 'b']), lines: z.array(z.object({ qty: z.literal(1) })) }),
    );
    // And one that takes more than the row: every row is one of its inputs.
    rows.schema('wider', z.object({ amount: z.union([z.number(), z.string()]) }));
    // @ts-expect-error the built batch must be what the sink takes
    secondary<string[]>({ open: () => undefined as never, derive: rows.build((r) => r.length) });
    expect(dqChecksOf(rows.build((r) => r))).toEqual([]);
  });
});
