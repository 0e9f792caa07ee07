import {
  headersSize,
  type OffsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';

/** What one record costs in memory beyond its bytes (object, offsets, header list). */
const RECORD_OVERHEAD = 64;

export function recordBytes(r: SourceRecord): number {
  return RECORD_OVERHEAD + payloadOf(r);
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
  bytes = 0;
  for (const r of batch.records) bytes += payloadOf(r);
  payloads.set(batch, bytes);
  return bytes;
}

/** The batch's bytes as held: each record's payload plus its overhead (`recordBytes`, summed). */
export function batchBytes(batch: SourceBatch): number {
  return RECORD_OVERHEAD * batch.records.length + payloadBytes(batch);
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
  const { records } = batch;
  if (records.length <= limits.maxRecords && batchBytes(batch) <= limits.maxBytes) return [batch];
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
