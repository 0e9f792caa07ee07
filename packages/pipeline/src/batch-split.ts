import {
  columnarOf,
  headersSize,
  recordCount,
  type ColumnarBatch,
  type OffsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';

/** What one record costs in memory beyond its bytes (object, offsets, header list). */
const RECORD_OVERHEAD = 64;

export function recordBytes(r: SourceRecord): number {
  return RECORD_OVERHEAD + payloadOf(r);
}

/**
 * Whether any record of the batch is larger than `limit` (`recordBytes`),
 * read off a columnar batch's columns without making a record.
 */
export function anyLarger(batch: SourceBatch, limit: number): boolean {
  const columnar = columnarOf(batch);
  if (columnar === null) return batch.records.some((r) => recordBytes(r) > limit);
  // No row holds more than the batch's regions together (the header region's
  // encoding is never shorter than its names and values): a batch within the
  // limit is decided without reading a row.
  const regions = columnar.keyBytes() + columnar.valueBytes() + columnar.headerBytes();
  if (RECORD_OVERHEAD + regions <= limit) return false;
  for (let i = 0; i < columnar.count; i++) {
    if (RECORD_OVERHEAD + columnar.rowBytes(i) > limit) return true;
  }
  return false;
}

/** The record's own bytes as the source delivered them: value, key and headers. */
export function payloadOf(r: SourceRecord): number {
  return r.value.byteLength + (r.key?.byteLength ?? 0) + headersSize(r.headers);
}

/**
 * Each batch's payload bytes, once: a batch is read for its size by the
 * counters, the budget's estimate and charge, the cut and every lane, and a
 * batch never changes (its records are readonly).
 */
const payloads = new WeakMap<SourceBatch, number>();

export function payloadBytes(batch: SourceBatch): number {
  let bytes = payloads.get(batch);
  if (bytes !== undefined) return bytes;
  const columnar = columnarOf(batch);
  if (columnar !== null) {
    // Read off the columns: no record is made to count them.
    bytes = columnar.payloadBytes();
  } else {
    bytes = 0;
    for (const r of batch.records) bytes += payloadOf(r);
  }
  payloads.set(batch, bytes);
  return bytes;
}

/** The batch's bytes as held: each record's payload plus its overhead (`recordBytes`, summed). */
export function batchBytes(batch: SourceBatch): number {
  return RECORD_OVERHEAD * recordCount(batch) + payloadBytes(batch);
}

export interface SplitLimits {
  readonly maxRecords: number;
  readonly maxBytes: number;
}

/**
 * Cuts a source batch into contiguous pieces within the limits. The pieces'
 * spans tile the batch's span exactly: the first starts at the batch's start,
 * each later one at its first record's offset, the last ends at the batch's
 * end. Offsets with no record (compaction, transaction markers) stay inside
 * a piece, so committing past them is still backed by the records around them.
 */
export function splitBatch(batch: SourceBatch, limits: SplitLimits): SourceBatch[] {
  if (recordCount(batch) <= limits.maxRecords && batchBytes(batch) <= limits.maxBytes) {
    return [batch];
  }
  const columnar = columnarOf(batch);
  if (columnar !== null) return splitColumns(columnar, limits);
  const { records } = batch;
  const pieces: SourceBatch[] = [];
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < records.length; i++) {
    const size = recordBytes(records[i] as SourceRecord);
    if (i > from && (i - from >= limits.maxRecords || bytes + size > limits.maxBytes)) {
      pieces.push(piece(batch, from, i, pieces.length === 0));
      from = i;
      bytes = 0;
    }
    bytes += size;
  }
  pieces.push(piece(batch, from, records.length, pieces.length === 0));
  return pieces;
}

function piece(batch: SourceBatch, from: number, to: number, first: boolean): SourceBatch {
  const records = batch.records.slice(from, to);
  const head = records[0] as SourceRecord;
  const next = batch.records[to];
  const span: OffsetSpan = {
    topic: batch.span.topic,
    partition: batch.span.partition,
    start: first ? batch.span.start : head.offset,
    end: next === undefined ? batch.span.end : next.offset,
  };
  return { span, records };
}

/** `splitBatch` of a columnar batch: the same cut, read off its columns, as slices. */
function splitColumns(batch: ColumnarBatch, limits: SplitLimits): SourceBatch[] {
  const pieces: SourceBatch[] = [];
  const n = batch.count;
  let from = 0;
  let bytes = 0;
  const cut = (to: number) => {
    const span: OffsetSpan = {
      topic: batch.span.topic,
      partition: batch.span.partition,
      start: pieces.length === 0 ? batch.span.start : batch.offsetAt(from),
      end: to === n ? batch.span.end : batch.offsetAt(to),
    };
    pieces.push(batch.slice(from, to, span));
  };
  for (let i = 0; i < n; i++) {
    const size = RECORD_OVERHEAD + batch.rowBytes(i);
    if (i > from && (i - from >= limits.maxRecords || bytes + size > limits.maxBytes)) {
      cut(i);
      from = i;
      bytes = 0;
    }
    bytes += size;
  }
  cut(n);
  return pieces;
}
