import { describe, expect, it } from 'vitest';
import {
  derivedCoverage,
  offsetSpan,
  RecordRefused,
  recordIdHex,
  runDerivation,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import type { RecordBatch } from 'apache-arrow';
import {
  BatchBuilder,
  BatchSchema,
  column,
  isEncodedBatch,
  type ArrowBatch,
} from '@thalweg/stream-arrow';
import {
  fakeZerobus,
  fromJson,
  zerobus,
  type ZerobusPartCommon,
  type ZerobusPartOptions,
} from '../src/index.js';
import { partContextOf, textRecord } from './part-context.js';

const CLUSTER = 'prod-eu';
const TABLE = 'main.app.events';
const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: true },
  ],
  recordId: 'hex',
});

const record = (offset: number, value: string): SourceRecord => textRecord(offset, value);
const batchOf = (start: number, values: readonly string[]): SourceBatch => ({
  span: offsetSpan('events', 3, start, start + values.length),
  records: values.map((v, i) => record(start + i, v)),
});

const contextOf = (id = 'zb-events') => partContextOf(id, CLUSTER);

type Overrides = Partial<ZerobusPartCommon> & { row?: (record: SourceRecord) => object };

const base = ({ row, ...overrides }: Overrides = {}): ZerobusPartOptions => ({
  table: TABLE,
  schema,
  transport: fakeZerobus({ ackLatencyMs: 1 }),
  row: row ?? fromJson((v: object) => v),
  streams: 1,
  retry: { baseDelayMs: 1 },
  rebuild: { baseDelayMs: 1 },
  ...overrides,
});

/** A derived batch as a RecordBatch: a `row` part's is one already. */
function built(batch: ArrowBatch | null): RecordBatch | null {
  if (batch !== null && isEncodedBatch(batch)) throw new Error('a row part derived IPC bytes');
  return batch;
}

async function opened(overrides: Overrides = {}) {
  const ctx = contextOf();
  const part = zerobus(base(overrides));
  const open = await part.open(ctx.context);
  return { ...ctx, part, open };
}

describe('zerobus(): the derivation', () => {
  it('gives each row the record id raw gives its record (the same cluster, partition, offset, payload)', async () => {
    const { open } = await opened();
    const raw = batchOf(40, ['{"id":1,"name":"a"}', '{"id":2}']);
    const { batch, quarantined } = await runDerivation(open.derive, CLUSTER, raw);
    expect(quarantined).toEqual([]);
    const ids = [
      ...((built(batch)?.getChild('_twg_record_id')?.toArray() as string[] | undefined) ?? []),
    ];
    expect(ids).toEqual(
      raw.records.map((r) =>
        recordIdHex({
          cluster: CLUSTER,
          topic: 'events',
          partition: 3,
          offset: r.offset,
          payload: r.value,
        }),
      ),
    );
    // And exactly what the derivation context (the library) says raw's id is.
    const viaContext: string[] = [];
    await runDerivation(
      (b, c) => {
        for (const r of b.records) viaContext.push(c.recordId(r).toString('hex'));
        return null;
      },
      CLUSTER,
      raw,
    );
    expect(ids).toEqual(viaContext);
    await open.sink.close();
  });

  it('quarantines a record whose row throws: RecordRefused gives the reason, any other error is decode', async () => {
    const { open } = await opened({
      row: (r) => {
        if (r.offset === 11) throw new RecordRefused('dq', 'amount below zero');
        if (r.offset === 12) throw new Error('no such event type');
        return { id: r.offset };
      },
    });
    const { batch, quarantined } = await runDerivation(
      open.derive,
      CLUSTER,
      batchOf(10, ['a', 'b', 'c', 'd']),
    );
    expect(quarantined).toEqual([
      { offset: 11, reason: 'dq', detail: 'amount below zero' },
      { offset: 12, reason: 'decode', detail: 'no such event type' },
    ]);
    expect(built(batch)?.getChild('id')?.toArray()).toEqual(new BigInt64Array([10n, 13n]));
    await open.sink.close();
  });

  it('quarantines a row the schema refuses as contract, naming the field; null when nothing is left', async () => {
    const { open } = await opened();
    const out = await runDerivation(
      open.derive,
      CLUSTER,
      batchOf(0, ['{"name":"no id"}', '{"id":"x"}']),
    );
    expect(out.batch).toBeNull();
    expect(out.quarantined.map((q) => [q.offset, q.reason])).toEqual([
      [0, 'contract'],
      [1, 'contract'],
    ]);
    expect(out.quarantined[0]?.detail).toMatch(/field "id"/);
    expect(out.quarantined[1]?.detail).toMatch(/field "id"/);
    await open.sink.close();
  });

  it('fromJson: a payload that is not UTF-8 JSON is decode, a JSON value that is not an object is contract', async () => {
    const { open } = await opened({ row: fromJson((v: { n: number }) => ({ id: v.n })) });
    const notJson = await runDerivation(open.derive, CLUSTER, batchOf(0, ['{"n":', '{"n":7}']));
    expect(notJson.quarantined.map((q) => [q.offset, q.reason])).toEqual([[0, 'decode']]);
    expect(built(notJson.batch)?.getChild('id')?.get(0)).toBe(7n);
    const { open: plain } = await opened({ row: fromJson((v: object) => v) });
    const scalar = await runDerivation(plain.derive, CLUSTER, batchOf(5, ['5']));
    expect(scalar.quarantined.map((q) => [q.offset, q.reason])).toEqual([[5, 'contract']]);
    await open.sink.close();
    await plain.sink.close();
  });
});

describe('zerobus(): open', () => {
  it('opens a sink named by the context that confirms through context.confirm; settings at debug only', async () => {
    const { open, confirm, info, debug, context } = await opened();
    const raw = batchOf(0, ['{"id":1}', '{"id":2}', '{"id":3}']);
    const { batch } = await runDerivation(open.derive, CLUSTER, raw);
    if (batch === null) throw new Error('the derivation left nothing');
    await open.sink.submit(batch, raw.span, derivedCoverage(context.id, raw.span));
    await open.sink.flush();
    expect(open.sink.descriptor.id).toBe('zb-events');
    expect(confirm.applied.map((a) => a.receipt.span)).toEqual([raw.span]);
    expect(debug.some((l) => l.includes('zb-events') && l.includes('channelCapacity=256'))).toBe(
      true,
    );
    expect(info).toEqual([]);
    const stats = open.stats();
    expect(stats).toMatchObject({
      table: TABLE,
      submittedBatches: 1,
      submittedRecords: 3,
      deliveredBatches: 1,
      deliveredRecords: 3,
      pending: 0,
      rebuilds: 0,
      poisoned: 0,
    });
    expect(stats.streams).toHaveLength(1);
    expect(stats.streams[0]?.coalesceP50).toBeTypeOf('number');
    await open.sink.close();
  });

  it('logs a stream rebuild at info; the replay does not count a batch twice', async () => {
    const transport = fakeZerobus({
      ackLatencyMs: 1,
      faults: (i) => (i === 0 ? [{ op: 'wait', nth: 1, failure: 'poison-stream' }] : []),
    });
    const { open, info, confirm, context } = await opened({ transport });
    for (let i = 0; i < 3; i++) {
      const raw = batchOf(i * 10, [`{"id":${i}}`]);
      const { batch } = await runDerivation(open.derive, CLUSTER, raw);
      if (batch === null) throw new Error('the derivation left nothing');
      await open.sink.submit(batch, raw.span, derivedCoverage(context.id, raw.span));
    }
    await open.sink.flush();
    expect(info.filter((l) => l.includes('died, rebuilding it (attempt 1 in a row)'))).toHaveLength(
      1,
    );
    expect(confirm.applied).toHaveLength(3);
    expect(open.stats()).toMatchObject({
      rebuilds: 1,
      poisoned: 1,
      submittedBatches: 3,
      deliveredBatches: 3,
      deliveredRecords: 3,
    });
    await open.sink.close();
  });

  it('refuses, as the real binding does, a batch whose schema is not the declared one', async () => {
    const transport = fakeZerobus({ ackLatencyMs: 1 });
    const { open, context } = await opened({ transport });
    const other = new BatchBuilder(
      BatchSchema.define({ fields: [{ name: 'id', type: column.utf8, nullable: false }] }),
    );
    const span = offsetSpan('events', 3, 0, 1);
    const refused = open.sink.submit(
      other.fromRows([{ id: 'x' }]),
      span,
      derivedCoverage(context.id, span),
    );
    await expect(refused).rejects.toMatchObject({ code: 'TWG_ZEROBUS_POISON_BATCH' });
    await expect(refused).rejects.toThrow('field "id" has type Utf8 in the batch, Int64 declared');
    expect(transport.server.batches).toHaveLength(0);
    await open.sink.close();
  });

  it('carries its lane settings and refuses an unknown config key at declaration, naming it', async () => {
    expect(zerobus(base({ lane: { maxQueuedBatches: 8 } })).lane).toEqual({ maxQueuedBatches: 8 });
    const untyped = { ...base(), waitPerBatch: true } as unknown as ZerobusPartOptions;
    expect(() => zerobus(untyped)).toThrow(/zerobus\.waitPerBatch: .*unknown key/);
  });
});

describe('zerobus(): types', () => {
  it('refuses at compile time a row that is not an object, and options without a schema', () => {
    const wrongRow = () =>
      zerobus({
        ...base(),
        // @ts-expect-error a row is an object keyed by field name, not a number
        row: (r: SourceRecord) => r.offset,
      });
    const noSchema = { table: TABLE, transport: fakeZerobus(), row: fromJson((v: object) => v) };
    // @ts-expect-error the schema is declared once, here: it cannot be left out
    const withoutSchema = () => zerobus(noSchema);
    expect(typeof wrongRow).toBe('function');
    expect(typeof withoutSchema).toBe('function');
  });
});
