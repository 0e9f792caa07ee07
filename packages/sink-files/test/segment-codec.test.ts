import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { writeIpcFileSegment } from '@thalweg/stream-arrow';
import { RecordBatch } from 'apache-arrow';
import { BatchPacker } from '../src/batch-packer.js';
import { BufferPool } from '@thalweg/connector-core';
import { packedSegmentChunks } from '../src/segment-codec.js';
import {
  RawRows,
  RawSinkError,
  SEGMENT_FORMAT_VERSION,
  SEGMENT_MANIFEST_METADATA,
  decodeSegment,
  encodePackedSegment,
  encodeRawBatch,
  encodeSegment,
  envelopeOf,
  rawSchema,
  segmentName,
} from '../src/index.js';
import { batchOf, CLUSTER, plain, record } from './helpers.js';

function segmentOfVersion(version: unknown, batch: SourceBatch): Uint8Array {
  const manifest = { format: 'twg-raw-segment', version, cluster: CLUSTER, spans: [batch.span] };
  const schema = rawSchema(new Map([[SEGMENT_MANIFEST_METADATA, JSON.stringify(manifest)]]));
  return writeIpcFileSegment([new RecordBatch(schema, encodeRawBatch(CLUSTER, batch).data)]);
}

describe('segment codec', () => {
  it('writes the current version, and refuses to read another, naming the file', () => {
    expect(SEGMENT_FORMAT_VERSION).toBe(3);
    const b = batchOf('t', 0, 0, 5);
    const current = decodeSegment(
      encodeSegment(CLUSTER, [{ span: b.span, batch: encodeRawBatch(CLUSTER, b) }]),
      'x',
    );
    expect(plain([current.batches[0]!.rows.record(0)])).toEqual(plain([b.records[0]!]));
    const file = join('/raw', segmentName(0));
    let error: unknown = null;
    try {
      decodeSegment(segmentOfVersion(2, b), file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RawSinkError);
    const e = error as RawSinkError;
    expect(e.code).toBe('TWG_RAW_SEGMENT_VERSION');
    expect(e.file).toBe(file);
    expect(e.message).toContain(file);
    expect(e.message).toContain('version 2');
  });

  it('encodes segments that do not alias the packed buffers, which are reused after encoding', () => {
    const pool = new BufferPool(1 << 24);
    const packer = new BatchPacker(CLUSTER, pool);
    const batches = [batchOf('t', 0, 0, 50), batchOf('t', 1, 0, 20)];
    const packed = batches.map((b) => packer.pack(b).batch);
    const bytes = encodePackedSegment(CLUSTER, packed);
    for (const p of packed) new Uint8Array(p.buffer).fill(0xee);
    const decoded = decodeSegment(bytes, 'seg');
    expect(decoded.cluster).toBe(CLUSTER);
    decoded.batches.forEach((d, i) => {
      expect(d.span).toEqual(batches[i]!.span);
      const rows = Array.from({ length: d.rows.length }, (_, r) => d.rows.record(r));
      expect(plain(rows)).toEqual(plain(batches[i]!.records));
    });
  });

  it('writes as chunks exactly the bytes of the one-buffer encoding, mostly views of the packed batches', () => {
    const packer = new BatchPacker(CLUSTER, new BufferPool(0));
    const packed = [batchOf('t', 0, 0, 50), batchOf('u', 3, 7, 9)].map((b) => packer.pack(b).batch);
    const { chunks, bytes } = packedSegmentChunks(CLUSTER, packed);
    const joined = Buffer.concat(chunks);
    expect(joined.byteLength).toBe(bytes);
    const whole = encodeSegment(
      CLUSTER,
      packed.map((p) => ({ span: p.span, batch: envelopeOf(CLUSTER, p) })),
    );
    expect(joined.equals(whole)).toBe(true);
    const views = chunks.filter((c) => packed.some((p) => c.buffer === p.buffer));
    expect(views.length).toBeGreaterThan(0);
  });

  it('tells which stored field of two copies of an offset differs, byte for byte', () => {
    const span = offsetSpan('t', 0, 0, 1);
    const rows = (overrides: Parameters<typeof record>[1]) =>
      RawRows.of(encodeRawBatch(CLUSTER, { span, records: [record(0, overrides)] }));
    const base = rows({});
    expect(base.difference(0, rows({}), 0)).toBeNull();
    expect(base.difference(0, rows({ key: null }), 0)).toBe('key');
    expect(rows({ key: null }).difference(0, base, 0)).toBe('key');
    expect(base.difference(0, rows({ key: Buffer.from('k1') }), 0)).toBe('key');
    expect(base.difference(0, rows({ value: Buffer.from('value-1') }), 0)).toBe('value');
    expect(base.difference(0, rows({ timestamp: 5 }), 0)).toBe('timestamp');
    expect(base.difference(0, rows({ headers: [] }), 0)).toBe('headers');
    // Header order is part of what the source delivered.
    const ab = rows({
      headers: [
        ['a', Buffer.from('1')],
        ['b', Buffer.from('2')],
      ],
    });
    const ba = rows({
      headers: [
        ['b', Buffer.from('2')],
        ['a', Buffer.from('1')],
      ],
    });
    expect(ab.difference(0, ba, 0)).toBe('headers');
  });
});
