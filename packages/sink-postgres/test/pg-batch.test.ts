import { describe, expect, it } from 'vitest';
import {
  NO_CONFIRM,
  offsetSpan,
  rawAnchor,
  setAsideOf,
  sinkId,
  type Confirm,
} from '@thalweg/connector-core';
import { PostgresSink, PostgresSinkError, rowsHeapBytes } from '../src/index.js';
import { batchAt, cover, ID, ordersSpec, quiet, recordingTarget, spanAt } from './helpers.js';

function unconnectedSink() {
  const target = recordingTarget();
  const sink = new PostgresSink({
    id: ID,
    connectionString: 'postgres://nobody@127.0.0.1:1/none',
    table: ordersSpec('t'),
    confirm: target,
    log: quiet,
  });
  return { sink, target };
}

async function refusal(p: Promise<unknown>): Promise<PostgresSinkError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PostgresSinkError) return e;
    throw e;
  }
  throw new Error('the batch was accepted');
}

describe('submit checks the batch before accepting it', () => {
  it.each([
    [
      'a 15-byte record id',
      { recordId: new Uint8Array(15), values: [1, 'a', null, null] },
      'batch.rows[1].recordId',
    ],
    ['a missing record id', { values: [1, 'a', null, null] }, 'batch.rows[1].recordId'],
    ['too few values', { recordId: new Uint8Array(16), values: [1, 'a'] }, 'batch.rows[1].values'],
    [
      'values that are not an array',
      { recordId: new Uint8Array(16), values: 'x' },
      'batch.rows[1].values',
    ],
  ])('refuses %s, naming the field and span', async (_what, bad, field) => {
    const { sink } = unconnectedSink();
    const rows = [batchAt(0, 1).rows[0]!, bad];
    const e = await refusal(sink.submit({ rows } as never, spanAt(0), cover(0)));
    expect(e.code).toBe('TWG_PG_SINK_BATCH_INVALID');
    // That batch alone is refused; the sink takes the next (a caller sets it aside).
    expect(setAsideOf(e)?.reason).toBe('poison');
    expect(e.message).toContain(field);
    expect(e.span).toEqual(spanAt(0));
    expect(e.table).toBe('"public"."t"');
    expect(sink.stats().queued).toBe(0);
    await sink.close();
  });

  it('refuses a confirmation for another sink or another span', async () => {
    const { sink } = unconnectedSink();
    const other = sinkId('other');
    const forOther: Confirm<'secondary'> = {
      kind: 'derived-coverage',
      sink: other,
      span: spanAt(0),
    };
    expect((await refusal(sink.submit(batchAt(0), spanAt(0), forOther))).message).toContain(
      'confirm.sink',
    );
    expect((await refusal(sink.submit(batchAt(0), spanAt(0), cover(1)))).message).toContain(
      'confirm.span',
    );
    // A raw anchor smuggled past the types by a JavaScript caller.
    const smuggled = rawAnchor(spanAt(0)) as unknown as Confirm<'secondary'>;
    expect((await refusal(sink.submit(batchAt(0), spanAt(0), smuggled))).message).toContain(
      'confirm.kind',
    );
    await sink.close();
  });

  it('refuses an invalid span', async () => {
    const { sink } = unconnectedSink();
    const inverted = { topic: 'orders', partition: 0, start: 10, end: 10 };
    expect((await refusal(sink.submit(batchAt(0), inverted, NO_CONFIRM))).message).toContain(
      'span',
    );
    await sink.close();
  });

  it('refuses submit after close', async () => {
    const { sink } = unconnectedSink();
    await sink.close();
    const e = await refusal(sink.submit(batchAt(0), spanAt(0), cover(0)));
    expect(e.code).toBe('TWG_PG_SINK_CLOSED');
  });

  it('takes only secondary-lane confirmations (compile-time)', async () => {
    const { sink } = unconnectedSink();
    const span = offsetSpan('orders', 0, 0, 10);
    // @ts-expect-error a raw anchor belongs to the primary-raw lane
    const wrongLane = sink.submit(batchAt(0), span, rawAnchor(span));
    expect((await refusal(wrongLane)).code).toBe('TWG_PG_SINK_BATCH_INVALID');
    await sink.close();
  });
});

describe('rowsHeapBytes', () => {
  it('counts each row, its value slots, and what each value holds', () => {
    const id = new Uint8Array(16);
    const row = { recordId: id, values: [7, 'abc', null, 12n, new Uint8Array(10), { a: 1 }, true] };
    // 160 + 7 slots of 8, then 16 + (16 + 3) + 0 + 24 + (96 + 10) + 64 + 0.
    expect(rowsHeapBytes([row])).toBe(160 + 56 + 16 + 19 + 24 + 106 + 64);
    expect(rowsHeapBytes([row, row])).toBe(2 * rowsHeapBytes([row]));
    expect(rowsHeapBytes([])).toBe(0);
  });

  it('grows with the text a row carries', () => {
    const row = (text: string) => ({ recordId: new Uint8Array(16), values: [text] });
    expect(rowsHeapBytes([row('x'.repeat(1000))]) - rowsHeapBytes([row('')])).toBe(1000);
  });
});
