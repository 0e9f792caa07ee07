import { describe, expect, it } from 'vitest';
import {
  offsetSpan,
  RECORD_ID_COLUMN,
  recordId,
  type SourceBatch,
  type SourceHeader,
} from '@thalweg/connector-core';
import { Field, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import {
  RAW_CLUSTER_METADATA,
  RawRows,
  RawSinkError,
  decodeRawBatch,
  encodeRawBatch,
  rawBatchSpan,
} from '../src/index.js';
import { batchOf, CLUSTER, plain, record } from './helpers.js';

function refusal(run: () => unknown): RawSinkError {
  try {
    run();
  } catch (error) {
    if (error instanceof RawSinkError) return error;
    throw error;
  }
  throw new Error('expected a RawSinkError');
}

describe('raw envelope', () => {
  it('round-trips keys null and not, empty values, headers and negative timestamps', () => {
    const headers: SourceHeader[] = [
      ['__proto__', Buffer.from('not a prototype')],
      ['ünïcode', new Uint8Array([0, 255])],
      ['empty', new Uint8Array(0)],
      ['constructor', null],
      ['__proto__', Buffer.from('twice')],
      ['a[1]', Buffer.from('looks generated')],
      ['thalweg.tombstone', new Uint8Array(0)],
    ];
    const batch: SourceBatch = {
      span: offsetSpan('orders', 3, 10, 20),
      records: [
        record(10),
        record(11, { value: new Uint8Array(0), key: null }),
        record(12, { key: new Uint8Array(0), headers, timestamp: -1 }),
        record(13, { value: new Uint8Array(0), tombstone: true }),
        record(14, { value: new Uint8Array(0), tombstone: true, headers }),
        record(19, { value: new Uint8Array(70_000).fill(9) }),
      ],
    };
    const envelope = encodeRawBatch(CLUSTER, batch);
    expect(envelope.numRows).toBe(6);
    expect(rawBatchSpan(envelope)).toEqual(batch.span);
    const decoded = decodeRawBatch(envelope);
    expect(plain(decoded)).toEqual(plain(batch.records));
    expect(decoded[2]!.headers.map(([name]) => name)).toEqual(headers.map(([name]) => name));
    expect(decoded[2]!.headers[3]![1]).toBeNull();
    expect(decoded.map((r) => r.tombstone ?? false)).toEqual([
      false,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('stores no record id, and what it decodes recomputes the ids connector-core gives the source records', () => {
    const batch = batchOf('orders', 2, 100, 105);
    const envelope = encodeRawBatch(CLUSTER, batch);
    expect(envelope.schema.fields.map((f) => f.name)).toEqual([
      'offset',
      'timestamp',
      'key',
      'value',
      'headers',
    ]);
    expect(envelope.schema.fields.map((f) => f.name)).not.toContain(RECORD_ID_COLUMN);
    const span = rawBatchSpan(envelope);
    const cluster = envelope.schema.metadata.get(RAW_CLUSTER_METADATA)!;
    const decoded = decodeRawBatch(envelope);
    expect(decoded).toHaveLength(batch.records.length);
    decoded.forEach((r, i) => {
      const source = batch.records[i]!;
      const fromRaw = recordId({ cluster, ...span, offset: r.offset, payload: r.value });
      const fromSource = recordId({
        cluster: CLUSTER,
        topic: 'orders',
        partition: 2,
        offset: source.offset,
        payload: source.value,
      });
      expect(fromRaw.equals(fromSource)).toBe(true);
    });
  });

  it('encodes a batch with no records (a span of compacted offsets)', () => {
    const envelope = encodeRawBatch(CLUSTER, { span: offsetSpan('t', 0, 5, 9), records: [] });
    expect(envelope.numRows).toBe(0);
    expect(decodeRawBatch(envelope)).toEqual([]);
  });

  it('refuses records it cannot store losslessly, naming the field and offset', () => {
    const span = offsetSpan('t', 0, 0, 10);
    const fractional = refusal(() =>
      encodeRawBatch(CLUSTER, { span, records: [record(0), record(1, { timestamp: 1.5 })] }),
    );
    expect(fractional.code).toBe('TWG_RAW_BATCH_INVALID');
    expect(fractional.offset).toBe(1);
    expect(fractional.field).toBe('batch.records[1].timestamp');

    const surrogate = refusal(() =>
      encodeRawBatch(CLUSTER, {
        span,
        records: [record(4, { headers: [['bad\ud800', new Uint8Array(1)]] })],
      }),
    );
    expect(surrogate.offset).toBe(4);
    expect(surrogate.message).toContain('lone surrogate');

    const notBytes = refusal(() =>
      encodeRawBatch(CLUSTER, {
        span,
        records: [record(2, { value: 'text' as unknown as Uint8Array })],
      }),
    );
    expect(notBytes.field).toBe('batch.records[0].value');
  });

  it('refuses to decode a batch that is not a raw envelope', () => {
    const schema = new Schema([new Field('offset', new Int64(), false)]);
    const child = makeData({ type: new Int64(), length: 1, data: new BigInt64Array([1n]) });
    const foreign = new RecordBatch(
      schema,
      makeData({ type: new Struct(schema.fields), length: 1, children: [child] }),
    );
    const error = refusal(() => decodeRawBatch(foreign, '/x/seg.arrow'));
    expect(error.code).toBe('TWG_RAW_SEGMENT_CORRUPT');
    expect(error.message).toContain('/x/seg.arrow');
    expect(error.message).toContain('is not the raw envelope');
  });
});

describe('RawRows int64 checks (read without BigInts)', () => {
  const envelope = (offsets: bigint[], timestamps: bigint[]) => {
    const batch = encodeRawBatch('c', batchOf('t', 0, 0, offsets.length));
    const o = batch.getChildAt(0)?.data[0]?.values as BigInt64Array;
    const ts = batch.getChildAt(1)?.data[0]?.values as BigInt64Array;
    offsets.forEach((v, i) => (o[i] = v));
    timestamps.forEach((v, i) => (ts[i] = v));
    return batch;
  };
  const MAX = 2n ** 53n - 1n;

  it('reads offsets and timestamps up to the largest safe integer exactly', () => {
    const rows = RawRows.of(envelope([MAX - 1n, MAX], [-MAX, MAX]));
    expect([rows.offset(0), rows.offset(1)]).toEqual([Number(MAX) - 1, Number(MAX)]);
    expect([rows.timestamp(0), rows.timestamp(1)]).toEqual([-Number(MAX), Number(MAX)]);
  });

  it.each([
    [
      'an offset past 2^53 - 1',
      [MAX + 1n],
      [0n],
      /offset 9007199254740992 is not an ascending safe offset/,
    ],
    ['a negative offset', [-1n], [0n], /offset -1 is not/],
    [
      'a timestamp past 2^53 - 1',
      [0n],
      [MAX + 1n],
      /timestamp 9007199254740992 is not a safe integer/,
    ],
    [
      'a timestamp below -(2^53 - 1)',
      [0n],
      [-MAX - 1n],
      /timestamp -9007199254740992 is not a safe/,
    ],
    ['a huge timestamp', [0n], [2n ** 62n], /timestamp 4611686018427387904 is not a safe/],
  ] as const)('refuses %s', (_, offsets, timestamps, message) => {
    expect(() => RawRows.of(envelope([...offsets], [...timestamps]))).toThrow(message);
  });
});
