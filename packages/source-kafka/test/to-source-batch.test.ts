import { describe, expect, it } from 'vitest';
import type { FetchedMessage, FetchedMessages } from '../src/index.js';
import { ColumnsWriter } from '@thalweg/connector-core';
import { toSourceBatch } from '../src/to-source-batch.js';

const msg = (offset: number, extra: Partial<FetchedMessage> = {}): FetchedMessage => ({
  offset: String(offset),
  key: Buffer.from(`k${offset}`),
  value: Buffer.from(`v${offset}`),
  timestamp: '1700000000123',
  headers: [],
  ...extra,
});

const batch = (
  messages: FetchedMessage[],
  extra: Partial<FetchedMessages> = {},
): FetchedMessages => ({
  topic: 't',
  partition: 3,
  firstOffset: messages[0]?.offset ?? null,
  lastOffset: messages[messages.length - 1]?.offset ?? '0',
  highWatermark: '100',
  kind: 'messages',
  messages,
  ...extra,
});

const str = (b: Uint8Array | undefined) =>
  b === undefined ? undefined : Buffer.from(b).toString();

describe('toSourceBatch', () => {
  it('converts offsets and timestamps to numbers and keeps keys and values as bytes', () => {
    const out = toSourceBatch(batch([msg(10), msg(11, { key: null })]), undefined);
    expect(out?.batch.span).toEqual({ topic: 't', partition: 3, start: 10, end: 12 });
    expect(
      out?.batch.records.map((r) => [
        r.offset,
        str(r.value),
        r.key === null ? null : str(r.key),
        r.timestamp,
      ]),
    ).toEqual([
      [10, 'v10', 'k10', 1700000000123],
      [11, 'v11', null, 1700000000123],
    ]);
    expect(out?.bytes).toBe(3 + 3 + 3);
  });

  it('covers filtered offsets at either end of the batch (transaction markers, aborted records)', () => {
    const out = toSourceBatch(batch([msg(11)], { firstOffset: '9', lastOffset: '14' }), undefined);
    expect(out?.batch.span).toMatchObject({ start: 9, end: 15 });
    expect(out?.batch.records).toHaveLength(1);
  });

  it('gives a fetch of only filtered records an empty batch with its span', () => {
    const empty = toSourceBatch(batch([], { firstOffset: '4', lastOffset: '6' }), undefined)?.batch;
    expect({ span: empty?.span, records: empty?.records }).toEqual({
      span: { topic: 't', partition: 3, start: 4, end: 7 },
      records: [],
    });
    // Compacted leftovers only: kafkajs skips past its fetch position.
    expect(
      toSourceBatch(batch([], { firstOffset: null, lastOffset: '8' }), undefined)?.batch.span,
    ).toMatchObject({ start: 8, end: 9 });
  });

  it('drops records before the floor and starts the span there; a batch wholly before it is dropped', () => {
    const out = toSourceBatch(batch([msg(0), msg(1), msg(2), msg(3)]), 2);
    expect(out?.batch.span).toMatchObject({ start: 2, end: 4 });
    expect(out?.batch.records.map((r) => r.offset)).toEqual([2, 3]);
    expect(out?.skipped).toBe(2);
    expect(toSourceBatch(batch([msg(0), msg(1)]), 2)).toBeNull();
  });

  it('keeps a tombstone as an empty value marked on the record, apart from an empty value and from any header', () => {
    const headers = [['thalweg.tombstone', Buffer.from('x')] as const];
    const out = toSourceBatch(
      batch([msg(0, { value: null, headers }), msg(1, { value: Buffer.alloc(0), headers })]),
      undefined,
    );
    const [tombstone, empty] = out?.batch.records ?? [];
    expect(tombstone?.value.byteLength).toBe(0);
    expect(tombstone?.tombstone).toBe(true);
    expect(tombstone?.headers).toEqual(headers);
    expect(empty?.value.byteLength).toBe(0);
    expect(empty?.tombstone).toBeUndefined();
    expect(empty?.headers).toEqual(headers);
  });

  it('keeps every header as delivered: order, repeats, prototype names, generated-looking names, null values', () => {
    const headers = [
      ['constructor', Buffer.from('c')],
      ['a', Buffer.from('1')],
      ['toString', null],
      ['a', Buffer.from('2')],
      ['a[1]', Buffer.from('3')],
      ['__proto__', Buffer.alloc(0)],
      ['0', Buffer.from([0, 255])],
    ] as const;
    const out = toSourceBatch(batch([msg(5, { headers })]), undefined);
    const r = out?.batch.records[0];
    expect(r?.headers).toEqual(headers);
    expect(r?.tombstone).toBeUndefined();
    const headerBytes = headers.reduce((n, [h, v]) => n + h.length + (v?.byteLength ?? 0), 0);
    expect(out?.bytes).toBe(2 + 2 + headerBytes);
  });

  it('refuses a timestamp beyond 2^53 ms, naming the offset, and converts the next fetch', () => {
    const writer = new ColumnsWriter();
    const bad = batch([msg(4), { ...msg(5), timestamp: '9007199254740993' }]);
    expect(() => toSourceBatch(bad, undefined, writer)).toThrow(
      /TWG_KAFKA_RECORD_INVALID: t\/3 offset 5: timestamp 9007199254740993 is not/,
    );
    expect(
      toSourceBatch(batch([msg(6)]), undefined, writer)?.batch.records.map((r) => r.offset),
    ).toEqual([6]);
  });

  it('refuses offsets that are not safe integers, naming the partition and the offset', () => {
    expect(() =>
      toSourceBatch(batch([], { firstOffset: '1', lastOffset: '9007199254740992' }), undefined),
    ).toThrow(/TWG_KAFKA_OFFSET_UNSAFE: t\/3 offset 9007199254740992 is not/);
    expect(() =>
      toSourceBatch(batch([], { firstOffset: '1', lastOffset: '9007199254740991' }), undefined),
    ).toThrow(/t\/3 offset 9007199254740991 \+ 1 is not/);
    expect(() => toSourceBatch(batch([msg(0)], { firstOffset: '-1' }), undefined)).toThrow(
      /offset -1 is not/,
    );
  });
});
