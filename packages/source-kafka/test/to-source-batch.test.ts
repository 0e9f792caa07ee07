import { describe, expect, it } from 'vitest';
import type { FetchedBatch, FetchedMessage } from '../src/index.js';
import { TOMBSTONE_HEADER } from '../src/index.js';
import { toSourceBatch } from '../src/to-source-batch.js';

const msg = (offset: number, extra: Partial<FetchedMessage> = {}): FetchedMessage => ({
  offset: String(offset),
  key: Buffer.from(`k${offset}`),
  value: Buffer.from(`v${offset}`),
  timestamp: '1700000000123',
  ...extra,
});

const batch = (messages: FetchedMessage[], extra: Partial<FetchedBatch> = {}): FetchedBatch => ({
  topic: 't',
  partition: 3,
  firstOffset: messages[0]?.offset ?? null,
  lastOffset: messages[messages.length - 1]?.offset ?? '0',
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
    expect(
      toSourceBatch(batch([], { firstOffset: '4', lastOffset: '6' }), undefined)?.batch,
    ).toEqual({
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

  it('keeps a tombstone as an empty value marked by a header', () => {
    const out = toSourceBatch(batch([msg(0, { value: null, headers: { a: 'x' } })]), undefined);
    const r = out?.batch.records[0];
    expect(r?.value.byteLength).toBe(0);
    expect(Object.keys(r?.headers ?? {})).toEqual(['a', TOMBSTONE_HEADER]);
    expect(r?.headers[TOMBSTONE_HEADER]?.byteLength).toBe(0);
    // An empty value is not a tombstone.
    expect(
      toSourceBatch(batch([msg(0, { value: Buffer.alloc(0) })]), undefined)?.batch.records[0]
        ?.headers,
    ).toEqual({});
  });

  it('turns string headers into bytes, null header values into empty bytes, repeated headers into name[n]', () => {
    const headers = {
      s: 'é',
      n: null,
      b: Buffer.from([1, 2]),
      r: ['x', Buffer.from('y'), null],
      __proto__: 'p',
    };
    const r = toSourceBatch(batch([msg(0, { headers })]), undefined)?.batch.records[0];
    expect(Object.keys(r?.headers ?? {}).sort()).toEqual(
      ['b', 'n', 'r', 'r[1]', 'r[2]', 's'].sort(),
    );
    expect([...(r?.headers['s'] ?? [])]).toEqual([0xc3, 0xa9]);
    expect(r?.headers['n']?.byteLength).toBe(0);
    expect([str(r?.headers['r']), str(r?.headers['r[1]']), r?.headers['r[2]']?.byteLength]).toEqual(
      ['x', 'y', 0],
    );
    const own = toSourceBatch(
      batch([msg(0, { headers: JSON.parse('{"__proto__":"p"}') as Record<string, string> })]),
      undefined,
    )?.batch.records[0]?.headers;
    expect(Object.keys(own ?? {})).toEqual(['__proto__']);
  });

  it('refuses a header that collides with a generated name rather than overwrite it', () => {
    expect(() =>
      toSourceBatch(batch([msg(5, { headers: { r: ['a', 'b'], 'r[1]': 'c' } })]), undefined),
    ).toThrow(/TWG_KAFKA_HEADER_CONFLICT: t\/3 offset 5: header "r\[1\]" collides/);
    expect(() =>
      toSourceBatch(
        batch([msg(6, { value: null, headers: { [TOMBSTONE_HEADER]: 'x' } })]),
        undefined,
      ),
    ).toThrow(/t\/3 offset 6: header "thalweg.tombstone" collides/);
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
