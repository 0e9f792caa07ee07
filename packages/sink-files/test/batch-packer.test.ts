import { describe, expect, it } from 'vitest';
import {
  offsetSpan,
  type SourceBatch,
  type SourceHeaders,
  type SourceRecord,
} from '@thalweg/connector-core';
import { BatchPacker } from '../src/batch-packer.js';
import { checkSourceBatch } from '../src/batch-check.js';
import { BufferPool } from '@thalweg/connector-core';
import { RawSinkError, decodeRawBatch, envelopeOf } from '../src/index.js';
import { CLUSTER, plain, record } from './helpers.js';
import { DirtyPool, mixedBatch } from './pack-fixtures.js';

function refusal(run: () => unknown): RawSinkError {
  try {
    run();
  } catch (error) {
    if (error instanceof RawSinkError) return error;
    throw error;
  }
  throw new Error('expected a RawSinkError');
}

describe('BatchPacker', () => {
  it('packs what decodes to the records, in a reused buffer holding old bytes', () => {
    const packer = new BatchPacker(CLUSTER, new DirtyPool());
    const batch = mixedBatch();
    const { batch: packed, payloadBytes } = packer.pack(batch);
    expect(packed.count).toBe(35);
    // Odd offsets have no key (helpers.record), and record 30 has none either.
    expect(packed.nullKeys).toBe(18);
    expect(packed.buffer.byteLength).toBeGreaterThanOrEqual(packed.bytes);
    const decoded = decodeRawBatch(envelopeOf(CLUSTER, packed));
    expect(plain(decoded)).toEqual(plain(batch.records));
    let expected = 0;
    for (const r of batch.records) {
      expected += (r.key?.byteLength ?? 0) + r.value.byteLength;
      for (const [k, v] of r.headers) expected += Buffer.byteLength(k) + (v?.byteLength ?? 0);
    }
    expect(payloadBytes).toBe(expected);
  });

  it('packs offsets past 2^32 exactly', () => {
    const packer = new BatchPacker(CLUSTER, new DirtyPool());
    const base = 2 ** 40 + 5;
    const batch: SourceBatch = {
      span: offsetSpan('t', 0, base, base + 3),
      records: [record(base), record(base + 2)],
    };
    const decoded = decodeRawBatch(envelopeOf(CLUSTER, packer.pack(batch).batch));
    expect(decoded.map((r) => r.offset)).toEqual([base, base + 2]);
    expect(decoded.map((r) => r.timestamp)).toEqual(batch.records.map((r) => r.timestamp));
  });

  it('grows its header scratch for a batch of many headers, and keeps prototype names and repeats in order', () => {
    const packer = new BatchPacker(CLUSTER, new BufferPool(0));
    const records: SourceRecord[] = Array.from({ length: 200 }, (_, i) =>
      record(i, {
        headers: Array.from({ length: 10 }, (_, h) => [`header-${h}`, new Uint8Array(20).fill(h)]),
      }),
    );
    records.push(
      record(200, {
        headers: [
          ['constructor', Buffer.from('c')],
          ['toString', null],
          ['__proto__', Buffer.from('p')],
          ['constructor', Buffer.from('again')],
        ],
      }),
    );
    const batch: SourceBatch = { span: offsetSpan('t', 0, 0, 201), records };
    const decoded = decodeRawBatch(envelopeOf(CLUSTER, packer.pack(batch).batch));
    expect(plain(decoded.slice(-1))[0]).toMatchObject({
      headers: [
        ['constructor', [...Buffer.from('c')]],
        ['toString', null],
        ['__proto__', [...Buffer.from('p')]],
        ['constructor', [...Buffer.from('again')]],
      ],
    });
    expect(plain(decoded.slice(0, 200))).toEqual(plain(records.slice(0, 200)));
  });

  it('refuses exactly as checkSourceBatch does, naming the field and offset', () => {
    const packer = new BatchPacker(CLUSTER, new BufferPool(0));
    const span = offsetSpan('t', 0, 0, 10);
    const bad: [string, SourceRecord[]][] = [
      ['not a record', [record(0), null as unknown as SourceRecord]],
      ['offset not an integer', [record(0), record(1.5)]],
      ['offset outside', [record(10)]],
      ['offset repeats', [record(2), record(2)]],
      ['timestamp', [record(1, { timestamp: Number.NaN })]],
      ['key', [record(1, { key: 'k' as unknown as Uint8Array })]],
      ['value', [record(1, { value: [1, 2] as unknown as Uint8Array })]],
      ['headers', [record(1, { headers: null as unknown as SourceHeaders })]],
      [
        'headers as a map',
        [record(1, { headers: { h: new Uint8Array(1) } as unknown as SourceHeaders })],
      ],
      ['header not a pair', [record(2, { headers: [['h']] as unknown as SourceHeaders })]],
      ['header value', [record(4, { headers: [['h', 'v' as unknown as Uint8Array]] })]],
      ['header name', [record(3, { headers: [['\udc00x', new Uint8Array(1)]] })]],
      ['header name type', [record(3, { headers: [[7 as unknown as string, null]] })]],
      ['tombstone flag', [record(5, { tombstone: false as unknown as true })]],
      ['tombstone with a value', [record(5, { tombstone: true })]],
    ];
    for (const [what, records] of bad) {
      const batch = { span, records };
      const packed = refusal(() => packer.pack(batch));
      const checked = refusal(() => checkSourceBatch(batch));
      expect(packed.code, what).toBe('TWG_RAW_BATCH_INVALID');
      expect({ field: packed.field, offset: packed.offset, message: packed.message }, what).toEqual(
        {
          field: checked.field,
          offset: checked.offset,
          message: checked.message,
        },
      );
    }
  });

  it('refuses a topic no record id can be computed for', () => {
    const packer = new BatchPacker(CLUSTER, new BufferPool(0));
    const error = refusal(() =>
      packer.pack({ span: offsetSpan('lone\ud800', 0, 0, 1), records: [record(0)] }),
    );
    expect(error.field).toBe('batch.span.topic');
    expect(error.message).toContain('lone surrogate');
  });
});
