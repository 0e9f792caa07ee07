import {
  headersSize,
  NO_HEADERS,
  offsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import type { FetchedBatch } from './consumer-port.js';
import { KafkaSourceError } from './errors.js';

const EMPTY = new Uint8Array(0);

export interface ConvertedBatch {
  readonly batch: SourceBatch;
  /** Key, value and header bytes of the records, for the queue bound. */
  readonly bytes: number;
  /** Records dropped because they lie before `floor` (already queued or sought past). */
  readonly skipped: number;
}

function unsafeOffset(raw: string, batch: FetchedBatch): KafkaSourceError {
  return new KafkaSourceError(
    'TWG_KAFKA_OFFSET_UNSAFE',
    `${batch.topic}/${batch.partition} offset ${raw} is not a non-negative integer below 2^53; ` +
      'thalweg offsets are safe integers and this one cannot be represented without rounding',
    { partition: { topic: batch.topic, partition: batch.partition } },
  );
}

function offsetOf(raw: string, batch: FetchedBatch): number {
  const n = Number(raw);
  // Number() of a decimal string at or above 2^53 is not a safe integer, so
  // this refuses rather than rounds (ADR 0004).
  if (!Number.isSafeInteger(n) || n < 0) throw unsafeOffset(raw, batch);
  return n;
}

/**
 * One fetched batch of one partition as a SourceBatch.
 *
 * The span runs from the first offset the fetch returned (filtered records
 * included) to one past `lastOffset`, the offset after which the client
 * resumes: a transaction marker or aborted records at either end are inside
 * the span, so committing its end moves past them. A batch with no records
 * (only filtered ones) still has its span. Records before `floor` (the end of
 * what this source already queued, or a sought cursor) are dropped, and the
 * span starts at `floor`; a batch entirely before it yields null. Offsets and
 * timestamps become numbers, refused beyond 2^53. Keys, values and headers
 * are kept as delivered; a null value becomes an empty one marked `tombstone`.
 */
export function toSourceBatch(
  fetched: FetchedBatch,
  floor: number | undefined,
): ConvertedBatch | null {
  const last = offsetOf(fetched.lastOffset, fetched);
  // The span's end is one past the last offset and must be safe too.
  if (last === Number.MAX_SAFE_INTEGER) throw unsafeOffset(`${fetched.lastOffset} + 1`, fetched);
  const end = last + 1;
  const first = fetched.firstOffset === null ? last : offsetOf(fetched.firstOffset, fetched);
  const start = floor === undefined ? first : Math.max(first, floor);
  if (end <= start) return null;
  const records: SourceRecord[] = [];
  let bytes = 0;
  let skipped = 0;
  for (const m of fetched.messages) {
    const offset = offsetOf(m.offset, fetched);
    if (offset < start) {
      skipped += 1;
      continue;
    }
    // The port's header list is already ordered pairs (SourceHeaders), kept
    // as it is: every name, repeated or not, reaches raw as it came.
    const headers = m.headers.length === 0 ? NO_HEADERS : m.headers;
    const base = {
      offset,
      key: m.key,
      value: m.value ?? EMPTY,
      timestamp: Number(m.timestamp),
      headers,
    };
    // A null value (a delete in a compacted topic) is marked on the record,
    // not by a header a producer could also set.
    records.push(m.value === null ? { ...base, tombstone: true } : base);
    bytes += (m.key?.byteLength ?? 0) + (m.value?.byteLength ?? 0) + headersSize(headers);
  }
  return {
    batch: { span: offsetSpan(fetched.topic, fetched.partition, start, end), records },
    bytes,
    skipped,
  };
}
