import { describe, expect, it } from 'vitest';
import { ColumnarBatch, ColumnsWriter, offsetSpan } from '@thalweg/connector-core';
import { BatchPacker } from '../src/batch-packer.js';
import { RawSinkError, decodeRawBatch, envelopeOf } from '../src/index.js';
import { CLUSTER, plain } from './helpers.js';
import { DirtyPool, mixedBatch } from './pack-fixtures.js';

const MIXED = mixedBatch();

describe('BatchPacker on a columnar batch', () => {
  it('packs what the same records pack to, and reports the same payload bytes', () => {
    const fromRecords = new BatchPacker(CLUSTER, new DirtyPool()).pack(MIXED);
    const columnar = new ColumnsWriter().write(MIXED);
    const fromColumns = new BatchPacker(CLUSTER, new DirtyPool()).pack(columnar);
    const shape = (b: typeof fromColumns.batch) => ({ ...b, buffer: null });
    expect(shape(fromColumns.batch)).toEqual(shape(fromRecords.batch));
    expect(fromColumns.payloadBytes).toBe(fromRecords.payloadBytes);
    const decoded = decodeRawBatch(envelopeOf(CLUSTER, fromColumns.batch));
    expect(plain(decoded)).toEqual(plain(MIXED.records));
  });

  it('packs a slice as the slice of the records', () => {
    const columnar = new ColumnsWriter().write(MIXED);
    const span = offsetSpan('t', 1, 29, 37);
    const slice = columnar.slice(29, 33, span);
    const packed = new BatchPacker(CLUSTER, new DirtyPool()).pack(slice);
    const expected = new BatchPacker(CLUSTER, new DirtyPool()).pack({
      span,
      records: MIXED.records.slice(29, 33),
    });
    expect(packed.batch.nullKeys).toBe(expected.batch.nullKeys);
    expect(packed.payloadBytes).toBe(expected.payloadBytes);
    expect(plain(decodeRawBatch(envelopeOf(CLUSTER, packed.batch)))).toEqual(
      plain(MIXED.records.slice(29, 33)),
    );
  });

  it('refuses columns whose offsets leave the span, naming the field and offset, and packs nothing', () => {
    const columnar = new ColumnsWriter().write(MIXED);
    const outside = ColumnarBatch.over(offsetSpan('t', 1, 0, 39), columnar.columns);
    let refused: unknown;
    try {
      new BatchPacker(CLUSTER, new DirtyPool()).pack(outside);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(RawSinkError);
    expect(refused).toMatchObject({ code: 'TWG_RAW_BATCH_INVALID', offset: 39 });
    expect((refused as RawSinkError).message).toContain('row 34: offset 39');
  });
});
