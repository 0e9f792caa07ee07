import type { SourceBatch, SourceRecord } from '@thalweg/connector-core';
import {
  Binary,
  Int32,
  Int64,
  Table,
  Utf8,
  tableFromIPC,
  tableToIPC,
  vectorFromArray,
  type RecordBatch,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import {
  RawSpanTally,
  encodeHeaders,
  rawBatchesOf,
  rawTableBatch,
  readHeaders,
  type RawTableSpan,
} from '../src/index.js';

const bytes = (s: string) => new Uint8Array(Buffer.from(s));

function record(offset: number, extra: Partial<SourceRecord> = {}): SourceRecord {
  return {
    offset,
    key: bytes(`k${offset}`),
    value: bytes(`v${offset}`),
    timestamp: 1_700_000_000_000 + offset,
    headers: [],
    ...extra,
  };
}

const batch = (start: number, end: number, records: SourceRecord[]): SourceBatch => ({
  span: { topic: 'orders', partition: 3, start, end },
  records,
});

/** Through Arrow IPC, as rows come back from a table file. */
const viaIpc = (b: RecordBatch): RecordBatch[] => tableFromIPC(tableToIPC(new Table(b))).batches;

/** One row with the given span columns, as a foreign writer could have written it. */
function forged(offset: bigint | null, start: bigint, end: bigint, records: number): RecordBatch {
  const t = new Table({
    topic: vectorFromArray(['orders'], new Utf8()),
    partition: vectorFromArray([3], new Int32()),
    offset: vectorFromArray([offset], new Int64()),
    timestamp_ms: vectorFromArray([0n], new Int64()),
    key: vectorFromArray([null], new Binary()),
    value: vectorFromArray([new Uint8Array(0)], new Binary()),
    headers: vectorFromArray([new Uint8Array(0)], new Binary()),
    span_start: vectorFromArray([start], new Int64()),
    span_end: vectorFromArray([end], new Int64()),
    span_records: vectorFromArray([records], new Int32()),
  });
  const [only] = t.batches;
  if (only === undefined) throw new Error('no batch');
  return only;
}

const everything = (): boolean => true;

describe('raw table rows', () => {
  it('hold what the source delivered: keys, null keys, headers with null values, tombstones, timestamps', () => {
    const source = batch(10, 20, [
      record(10, {
        headers: [
          ['trace', bytes('abc')],
          ['trace', null],
          ['é', bytes('')],
        ],
      }),
      record(12, { key: null }),
      record(15, { value: new Uint8Array(0), tombstone: true }),
    ]);
    const rows = rawTableBatch(source);
    expect(rows.numRows).toBe(3);
    const [back] = rawBatchesOf(viaIpc(rows), 'test', everything);
    expect(back?.span).toEqual(source.span);
    expect(back?.records.map((r) => r.offset)).toEqual([10, 12, 15]);
    const [a, b, c] = back?.records ?? [];
    expect(Buffer.from(a?.key ?? []).toString()).toBe('k10');
    expect(a?.headers.map(([n, v]) => [n, v === null ? null : Buffer.from(v).toString()])).toEqual([
      ['trace', 'abc'],
      ['trace', null],
      ['é', ''],
    ]);
    expect(b?.key).toBeNull();
    expect(c?.tombstone).toBe(true);
    expect(c?.value.byteLength).toBe(0);
    expect(a?.timestamp).toBe(1_700_000_000_010);
  });

  it('a batch of no records is one marker row, and reads back as its span with no records', () => {
    const rows = rawTableBatch(batch(5, 9, []));
    expect(rows.numRows).toBe(1);
    expect(rawBatchesOf([rows], 'test', everything)).toEqual([
      { span: { topic: 'orders', partition: 3, start: 5, end: 9 }, records: [] },
    ]);
  });

  it('a batch is held only once all its records are visible, however its rows are split or repeated', () => {
    const rows = rawTableBatch(batch(0, 4, [record(0), record(1), record(2), record(3)]));
    const first = rows.slice(0, 3);
    const rest = rows.slice(3);
    const tally = new RawSpanTally();
    tally.add(first, 'file-a');
    tally.add(first, 'file-a-again');
    expect(tally.complete()).toEqual([]);
    expect(tally.partial()).toEqual([
      { topic: 'orders', partition: 3, start: 0, end: 4, records: 4 } satisfies RawTableSpan,
    ]);
    expect(rawBatchesOf([first, first], 'test', everything)).toEqual([]);
    const other = new RawSpanTally();
    other.add(rest, 'file-b');
    tally.merge(other);
    expect(tally.complete().map((s) => [s.start, s.end])).toEqual([[0, 4]]);
    const [whole] = rawBatchesOf([rest, first, first], 'test', everything);
    expect(whole?.records.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
  });

  it('the same offsets in two batches (a re-read after a crash) are two spans, each whole on its own', () => {
    const before = rawTableBatch(batch(0, 3, [record(0), record(1), record(2)]));
    const after = rawTableBatch(batch(1, 5, [record(1), record(2), record(3), record(4)]));
    const read = rawBatchesOf([after, before], 'test', (s) => s.end > 2);
    expect(read.map((b) => [b.span.start, b.span.end, b.records.length])).toEqual([
      [0, 3, 3],
      [1, 5, 4],
    ]);
  });

  it('refuses a bad batch naming the field and the offset, before any row is built', () => {
    expect(() => rawTableBatch(batch(0, 5, [record(3), record(2)]))).toThrow(
      /batch\.records\[1\]\.offset.*does not ascend/,
    );
    expect(() => rawTableBatch(batch(0, 5, [record(7)]))).toThrow(/lies outside the batch span/);
  });

  it('refuses rows that contradict their span, naming where and the row', () => {
    const tally = new RawSpanTally();
    expect(() => tally.add(forged(9n, 0n, 5n, 1), 'x.parquet')).toThrow(
      /x\.parquet row 0: offset 9 lies outside its span \[0, 5\)/,
    );
    expect(() => tally.add(forged(1n, 0n, 2n, 3), 'x.parquet')).toThrow(
      /span \[0, 2\) cannot hold 3 records/,
    );
    expect(() => tally.add(forged(null, 0n, 2n, 1), 'x.parquet')).toThrow(
      /offset is null in a span of 1 records/,
    );
    expect(() => tally.add(forged(-1n, 0n, 2n, 1), 'x.parquet')).toThrow(
      /offset is -1, not an offset-like integer/,
    );
  });

  it('encodes headers as the raw segments do', () => {
    const encoded = encodeHeaders(
      [
        ['a', bytes('x')],
        ['b', null],
      ],
      true,
    );
    expect(readHeaders(encoded).tombstone).toBe(true);
    expect(readHeaders(encoded).headers.map(([n]) => n)).toEqual(['a', 'b']);
    expect(encodeHeaders([], false).byteLength).toBe(0);
    expect(() => encodeHeaders([['\ud800', null]], false)).toThrow(/lone surrogate/);
  });
});
