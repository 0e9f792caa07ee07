import { offsetSpan, type SourceBatch, type SourceRecord } from '@thalweg/connector-core';
import type { FetchedBatch, FetchedHeaderValue, FetchedMessage } from './consumer-port.js';
import { KafkaSourceError } from './errors.js';

/**
 * The header that marks a tombstone. `SourceRecord.value` cannot be null,
 * so a Kafka record with a null value (a delete in a compacted topic) is
 * given an empty value AND this header with an empty value: the record is
 * kept, and a null value stays distinguishable from an empty one.
 */
export const TOMBSTONE_HEADER = 'thalweg.tombstone';

const EMPTY = new Uint8Array(0);
const EMPTY_HEADERS: Readonly<Record<string, Uint8Array>> = Object.freeze({});
const utf8 = new TextEncoder();

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

function headerBytes(v: FetchedHeaderValue): Uint8Array {
  if (v === null) return EMPTY;
  return typeof v === 'string' ? utf8.encode(v) : v;
}

/**
 * Kafka headers are an ordered list in which a name may repeat; a
 * `SourceRecord` has one value per name. A repeated header keeps its first
 * value under its name and the n-th repetition under `name[n]` (n from 1); a
 * null header value becomes empty bytes. A generated name that the record
 * also carries is refused rather than overwritten (no header is lost).
 */
function toHeaders(
  m: FetchedMessage,
  tombstone: boolean,
  batch: FetchedBatch,
  offset: number,
): { headers: Readonly<Record<string, Uint8Array>>; bytes: number } {
  const raw = m.headers;
  const names = raw === undefined ? [] : Object.keys(raw);
  if (names.length === 0 && !tombstone) return { headers: EMPTY_HEADERS, bytes: 0 };
  const entries: [string, Uint8Array][] = [];
  let generated = false;
  for (const name of names) {
    const v = raw?.[name];
    if (v === undefined) continue;
    if (Array.isArray(v)) {
      const values = v as readonly FetchedHeaderValue[];
      values.forEach((x, i) => entries.push([i === 0 ? name : `${name}[${i}]`, headerBytes(x)]));
      generated ||= values.length > 1;
    } else {
      entries.push([name, headerBytes(v as FetchedHeaderValue)]);
    }
  }
  if (tombstone) {
    entries.push([TOMBSTONE_HEADER, EMPTY]);
    generated = true;
  }
  if (generated) {
    const seen = new Set<string>();
    for (const [name] of entries) {
      if (seen.has(name)) {
        throw new KafkaSourceError(
          'TWG_KAFKA_HEADER_CONFLICT',
          `${batch.topic}/${batch.partition} offset ${offset}: header "${name}" collides with a name thalweg generates ` +
            `(repeated headers become name[n]; "${TOMBSTONE_HEADER}" marks a null value)`,
          { partition: { topic: batch.topic, partition: batch.partition } },
        );
      }
      seen.add(name);
    }
  }
  let bytes = 0;
  for (const [name, value] of entries) bytes += name.length + value.byteLength;
  // fromEntries defines own properties, so a header named __proto__ stays a header.
  return { headers: Object.fromEntries(entries), bytes };
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
 * timestamps become numbers, refused beyond 2^53.
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
    const tombstone = m.value === null;
    const { headers, bytes: headerSize } = toHeaders(m, tombstone, fetched, offset);
    const value = m.value ?? EMPTY;
    records.push({
      offset,
      key: m.key,
      value,
      timestamp: Number(m.timestamp),
      headers,
    });
    bytes += (m.key?.byteLength ?? 0) + value.byteLength + headerSize;
  }
  return {
    batch: { span: offsetSpan(fetched.topic, fetched.partition, start, end), records },
    bytes,
    skipped,
  };
}
