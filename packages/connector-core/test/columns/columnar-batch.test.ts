import { describe, expect, it } from 'vitest';
import {
  ColumnarBatch,
  ColumnsWriter,
  columnsLayout,
  columnsProblem,
  InvalidInputError,
  NO_HEADERS,
  offsetSpan,
  packBatch,
  packRecords,
  recordCount,
  type PackedRecords,
  type SourceBatch,
  type SourceRecord,
} from '../../src/index.js';

const bytes = (...b: number[]) => Buffer.from(b);

const RECORDS: SourceRecord[] = [
  { offset: 10, key: bytes(1), value: bytes(1, 2, 3), timestamp: 1_700_000_000_000, headers: [] },
  { offset: 11, key: null, value: bytes(), timestamp: -5, headers: [['a', null]] },
  {
    offset: 14,
    key: bytes(),
    value: bytes(),
    timestamp: Number.MAX_SAFE_INTEGER,
    headers: [
      ['__proto__', bytes(9)],
      ['a', bytes(7, 7)],
      ['a', bytes()],
    ],
    tombstone: true,
  },
  {
    offset: 2 ** 40 + 3,
    key: bytes(4, 4),
    value: Buffer.alloc(300, 8),
    timestamp: Number.MIN_SAFE_INTEGER,
    headers: [],
  },
];

const BATCH: SourceBatch = { span: offsetSpan('t', 2, 9, 2 ** 40 + 10), records: RECORDS };

/** A record as plain data, so a Buffer and a view of the same bytes compare equal. */
function plain(r: SourceRecord) {
  return {
    ...r,
    key: r.key === null ? null : [...r.key],
    value: [...r.value],
    headers: r.headers.map(([n, v]) => [n, v === null ? null : [...v]]),
  };
}

function refusal(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidInputError) return error;
    throw error;
  }
  throw new Error('expected an InvalidInputError');
}

describe('ColumnarBatch', () => {
  it('gives back the records it was written from, tombstone, null key and repeated headers kept', () => {
    const batch = new ColumnsWriter().write(BATCH);
    expect(batch).toBeInstanceOf(ColumnarBatch);
    expect(recordCount(batch)).toBe(4);
    expect(batch.span).toEqual(BATCH.span);
    expect(batch.records.map(plain)).toEqual(RECORDS.map(plain));
    expect(batch.records[0]?.headers).toBe(NO_HEADERS);
    expect(batch.records).toBe(batch.records);
    // Seen as a plain batch: its own enumerable properties are span and records.
    expect(Object.keys(batch)).toEqual(['span', 'records']);
    expect(batch).toEqual({ span: BATCH.span, records: RECORDS });
    expect(batch.columns.nullKeys).toBe(1);
    expect(batch.payloadBytes()).toBe(
      batch.keyBytes() + batch.valueBytes() + batch.headerPayload(),
    );
    expect(batch.keyBytes()).toBe(3);
    expect(batch.valueBytes()).toBe(303);
    // Names and values, no lengths or tombstone mark: a(1) + __proto__(9+1) + a(1+2) + a(1).
    expect(batch.headerPayload()).toBe(1 + 10 + 3 + 1);
    expect(columnsProblem(batch)).toBeNull();
  });

  it('cuts slices that share the columns and read their own rows', () => {
    const batch = new ColumnsWriter().write(BATCH);
    const tail = batch.slice(1, 4, offsetSpan('t', 2, 11, 2 ** 40 + 10));
    expect(tail.count).toBe(3);
    expect(tail.columns).toBe(batch.columns);
    expect(tail.offsetAt(0)).toBe(11);
    expect(tail.timestampAt(2)).toBe(Number.MIN_SAFE_INTEGER);
    expect(tail.records.map(plain)).toEqual(RECORDS.slice(1).map(plain));
    expect(tail.rowBytes(2)).toBe(302);
    expect(tail.slice(2, 3, offsetSpan('t', 2, 14, 2 ** 40 + 10)).records.map(plain)).toEqual([
      plain(RECORDS[3] as SourceRecord),
    ]);
    expect(() => tail.slice(2, 4, tail.span)).toThrow(RangeError);
  });

  it('writes its rows as columns of their own, rebased, with the null keys of the slice', () => {
    const batch = new ColumnsWriter().write(BATCH);
    const whole = new ColumnsWriter().write({
      span: offsetSpan('t', 2, 11, 15),
      records: RECORDS.slice(1, 3),
    });
    const slice = batch.slice(1, 3, offsetSpan('t', 2, 11, 15));
    const target = new ArrayBuffer(whole.columns.bytes + 16);
    new Uint8Array(target).fill(0xff);
    const at = columnsLayoutOf(whole);
    const nullKeys = slice.writeColumns(target, at);
    expect(nullKeys).toBe(1);
    // Every region the layout reads is the same; the padding between them is never read.
    const region = (buffer: ArrayBuffer, from: number, to: number) => [
      ...new Uint8Array(buffer, from, to - from),
    ];
    for (const [from, to] of [
      [at.offsets, at.keyOffsets],
      [at.keyOffsets, at.keyOffsets + 12],
      [at.valueOffsets, at.valueOffsets + 12],
      [at.headerOffsets, at.headerOffsets + 12],
      [at.validity, at.validity + at.validityBytes],
      [at.keys, at.keys + whole.keyBytes()],
      [at.values, at.values + whole.valueBytes()],
      [at.headers, at.total],
    ] as const) {
      expect(region(target, from, to)).toEqual(region(whole.columns.buffer, from, to));
    }
    const copy = ColumnarBatch.over(slice.span, { ...whole.columns, nullKeys, buffer: target });
    expect(copy.records.map(plain)).toEqual(RECORDS.slice(1, 3).map(plain));
  });

  it('refuses a record out of order, an unsafe timestamp, bad headers and short sizes, naming field and offset', () => {
    const writer = new ColumnsWriter();
    writer.begin({ count: 2, keyBytes: 0, valueBytes: 0, headerBytes: 0 });
    writer.append(5, 0, null, bytes(), []);
    const back = refusal(() => writer.append(5, 0, null, bytes(), []));
    expect(back.field).toBe('offset');
    expect(back.message).toContain('offset 5');

    writer.begin({ count: 1, keyBytes: 0, valueBytes: 0, headerBytes: 0 });
    expect(refusal(() => writer.append(1, 2 ** 60, null, bytes(), [])).field).toBe('timestamp');

    writer.begin({ count: 1, keyBytes: 0, valueBytes: 0, headerBytes: 64 });
    const lone = refusal(() => writer.append(3, 0, null, bytes(), [['\ud800', null]]));
    expect(lone.field).toBe('headers');
    expect(lone.message).toContain('offset 3');

    writer.begin({ count: 1, keyBytes: 0, valueBytes: 2, headerBytes: 0 });
    expect(refusal(() => writer.append(3, 0, null, bytes(1, 2, 3), [])).field).toBe('value');

    writer.begin({ count: 2, keyBytes: 0, valueBytes: 0, headerBytes: 0 });
    writer.append(3, 0, null, bytes(), []);
    expect(refusal(() => writer.finish(offsetSpan('t', 0, 0, 9))).message).toContain('appended 1');

    writer.begin({ count: 1, keyBytes: 0, valueBytes: 0, headerBytes: 0 });
    writer.append(30, 0, null, bytes(), []);
    expect(refusal(() => writer.finish(offsetSpan('t', 0, 0, 9))).field).toBe('span');

    writer.begin({ count: 1, keyBytes: 0, valueBytes: 0, headerBytes: 0 });
    expect(refusal(() => writer.headerBytes([], true)).message).toContain('sum the sizes first');
    expect(refusal(() => writer.append(1, 0, 'k' as never, null, [])).field).toBe('key');

    const tombstoneWithValue = {
      span: offsetSpan('t', 0, 0, 2),
      records: [
        {
          offset: 1,
          key: null,
          value: bytes(1),
          timestamp: 0,
          headers: [],
          tombstone: true as const,
        },
      ],
    };
    expect(refusal(() => writer.write(tombstoneWithValue)).field).toBe('tombstone');

    // After a refusal the writer takes the next batch.
    expect(writer.write(BATCH).records.map(plain)).toEqual(RECORDS.map(plain));
  });

  it('writes from regions of a source what it writes from views of it (appendFrom)', () => {
    // Each record's key and value laid out in one buffer, as a fetch response holds them.
    const parts = RECORDS.flatMap((r) => [r.key ?? bytes(), r.tombstone ? bytes() : r.value]);
    const source = Buffer.concat(parts);
    const writer = new ColumnsWriter();
    const sizes = { count: RECORDS.length, keyBytes: 0, valueBytes: 0, headerBytes: 0 };
    for (const r of RECORDS) {
      sizes.keyBytes += r.key?.byteLength ?? 0;
      sizes.valueBytes += r.value.byteLength;
      sizes.headerBytes += writer.headerBytes(r.headers, r.tombstone === true);
    }
    writer.begin(sizes);
    let at = 0;
    for (const r of RECORDS) {
      const keyStart = at;
      at += r.key?.byteLength ?? 0;
      const valueStart = at;
      at += r.tombstone ? 0 : r.value.byteLength;
      const keyLength = r.key === null ? -1 : r.key.byteLength;
      const valueLength = r.tombstone ? -1 : r.value.byteLength;
      writer.appendFrom(
        r.offset,
        r.timestamp,
        source,
        keyStart,
        keyLength,
        valueStart,
        valueLength,
        r.headers,
      );
    }
    expect(writer.finish(BATCH.span).records.map(plain)).toEqual(RECORDS.map(plain));

    writer.begin({ count: 1, keyBytes: 2, valueBytes: 0, headerBytes: 0 });
    const past = refusal(() => writer.appendFrom(7, 0, source, source.length - 1, 2, 0, 0, []));
    expect(past.field).toBe('key');
    expect(past.message).toContain('offset 7');
    writer.begin({ count: 1, keyBytes: 0, valueBytes: 3, headerBytes: 0 });
    expect(refusal(() => writer.appendFrom(7, 0, source, 0, -1, 0, -2, [])).field).toBe('value');
    writer.begin({ count: 1, keyBytes: 0, valueBytes: 2, headerBytes: 0 });
    expect(refusal(() => writer.appendFrom(7, 0, source, 0, -1, 0, 3, [])).message).toContain(
      'values exceed the declared bytes',
    );
  });

  it('finds columns made elsewhere that break the order or leave their region', () => {
    const batch = new ColumnsWriter().write(BATCH);
    const ints = new Int32Array(batch.columns.buffer, 0, 8);
    // Row 1's offset (int64 at int32 index 2) set below row 0's.
    ints[2] = 3;
    ints[3] = 0;
    expect(columnsProblem(batch)).toMatchObject({ field: 'offset' });
    const again = new ColumnsWriter().write(BATCH);
    const at = columnsLayoutOf(again);
    new Int32Array(again.columns.buffer, at.valueOffsets, 5)[4] = 1_000;
    expect(columnsProblem(again)).toMatchObject({ field: 'value', offset: 2 ** 40 + 3 });
  });
});

function columnsLayoutOf(batch: ColumnarBatch) {
  const c = batch.columns;
  return columnsLayout(c.count, c.keyBytes, c.valueBytes, c.headerBytes);
}

describe('ColumnarBatch off its columns', () => {
  it('packs for another thread what packRecords packs of its records, for the whole and a slice', () => {
    const batch = new ColumnsWriter().write(BATCH);
    const plainPacked = (p: PackedRecords) => ({
      bytes: [...p.bytes],
      ends: [...p.ends],
      tombstones: [...p.tombstones],
      offsets: [...p.offsets],
      timestamps: [...p.timestamps],
    });
    expect(plainPacked(packBatch(batch))).toEqual(plainPacked(packRecords(RECORDS)));
    const slice = batch.slice(1, 3, offsetSpan('t', 2, 11, 15));
    expect(plainPacked(packBatch(slice))).toEqual(plainPacked(packRecords(RECORDS.slice(1, 3))));
    // Its own buffer: transferring it away leaves the batch whole.
    expect(packBatch(slice).bytes.buffer).not.toBe(batch.columns.buffer);
  });

  it('detaches a slice into columns of its own, and keeps a whole batch as it is', () => {
    const batch = new ColumnsWriter().write(BATCH);
    expect(batch.detached()).toBe(batch);
    const slice = batch.slice(2, 4, offsetSpan('t', 2, 14, 2 ** 40 + 10));
    const detached = slice.detached();
    expect(detached.columns.buffer).not.toBe(batch.columns.buffer);
    expect(detached.columns.count).toBe(2);
    expect(detached.span).toEqual(slice.span);
    expect(detached.records.map(plain)).toEqual(RECORDS.slice(2).map(plain));
    expect(columnsProblem(detached)).toBeNull();
  });

  it('gives the same rows without the records made of them (columnsOnly), sharing the columns', () => {
    const batch = new ColumnsWriter().write(BATCH);
    const made = batch.records;
    const slice = batch.slice(1, 3, offsetSpan('t', 2, 11, 15));
    const sliceMade = slice.records;
    for (const [from, lean] of [
      [batch, batch.columnsOnly()],
      [slice, slice.columnsOnly()],
    ] as const) {
      expect(lean).not.toBe(from);
      expect(lean.columns).toBe(from.columns);
      expect(lean.span).toEqual(from.span);
      expect(lean.count).toBe(from.count);
      expect(lean.payloadBytes()).toBe(from.payloadBytes());
      // Made again when read: equal records, not the ones the first batch keeps.
      expect(lean.records).not.toBe(from.records);
      expect(lean.records.map(plain)).toEqual(from.records.map(plain));
    }
    expect(batch.records).toBe(made);
    expect(slice.records).toBe(sliceMade);
  });
});
