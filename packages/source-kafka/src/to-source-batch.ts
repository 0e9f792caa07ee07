import { ColumnsWriter, offsetSpan, type SourceBatch } from '@thalweg/connector-core';
import type {
  FetchedBatch,
  FetchedMessage,
  FetchedMessages,
  FetchedSpan,
} from './consumer-port.js';
import { KafkaSourceError, timestampUnsafe } from './errors.js';

export interface ConvertedBatch {
  readonly batch: SourceBatch;
  /** Key, value and header bytes of the records, for the queue bound. */
  readonly bytes: number;
  /** Records dropped because they lie before `floor` (already queued or sought past). */
  readonly skipped: number;
}

function unsafeOffset(raw: string, batch: FetchedSpan): KafkaSourceError {
  return new KafkaSourceError(
    'TWG_KAFKA_OFFSET_UNSAFE',
    `${batch.topic}/${batch.partition} offset ${raw} is not a non-negative integer below 2^53; ` +
      'thalweg offsets are safe integers and this one cannot be represented without rounding',
    { partition: { topic: batch.topic, partition: batch.partition } },
  );
}

function offsetOf(raw: string, batch: FetchedSpan): number {
  const n = Number(raw);
  // Number() of a decimal string at or above 2^53 is not a safe integer, so
  // this refuses rather than rounds (ADR 0004).
  if (!Number.isSafeInteger(n) || n < 0) throw unsafeOffset(raw, batch);
  return n;
}

/**
 * One fetched batch of one partition as a SourceBatch, written as columns
 * (connector-core's ColumnarBatch): each key, value and header list copied
 * once into one buffer, no object per record, so raw copies whole regions
 * and the fetch's buffers are free as soon as this returns. Records are
 * made only if a secondary asks for them.
 *
 * The span runs from the first offset the fetch returned (filtered records
 * included) to one past `lastOffset`, the offset after which the client
 * resumes: a transaction marker or aborted records at either end are inside
 * the span, so committing its end moves past them. A batch with no records
 * (only filtered ones) still has its span. Records before `floor` (the end of
 * what this source already queued, or a sought cursor) are dropped, and the
 * span starts at `floor`; a batch entirely before it yields null. Offsets and
 * timestamps become numbers, refused beyond 2^53. Keys, values and headers
 * are kept as delivered (every header, in order, repeats included); a null
 * value becomes an empty one marked `tombstone`.
 */
export function toSourceBatch(
  fetched: FetchedBatch,
  floor: number | undefined,
  writer: ColumnsWriter = new ColumnsWriter(),
): ConvertedBatch | null {
  const last = offsetOf(fetched.lastOffset, fetched);
  // The span's end is one past the last offset and must be safe too.
  if (last === Number.MAX_SAFE_INTEGER) throw unsafeOffset(`${fetched.lastOffset} + 1`, fetched);
  const end = last + 1;
  const first = fetched.firstOffset === null ? last : offsetOf(fetched.firstOffset, fetched);
  const start = floor === undefined ? first : Math.max(first, floor);
  if (end <= start) return null;
  let skipped: number;
  try {
    skipped =
      fetched.kind === 'columns'
        ? fetched.write(writer, start)
        : writeMessages(fetched, start, writer);
  } catch (error) {
    writer.abandon();
    throw error;
  }
  const batch = writer.finish(offsetSpan(fetched.topic, fetched.partition, start, end));
  return { batch, bytes: batch.payloadBytes(), skipped };
}

/** Message objects (kafkajs) into the writer, from `start` on; how many lay before it. */
function writeMessages(fetched: FetchedMessages, start: number, writer: ColumnsWriter): number {
  const { messages } = fetched;
  // First pass: what is kept, and the columns' sizes.
  let from = 0;
  while (
    from < messages.length &&
    offsetOf((messages[from] as FetchedMessage).offset, fetched) < start
  ) {
    from++;
  }
  let keyBytes = 0;
  let valueBytes = 0;
  let headerBytes = 0;
  for (let i = from; i < messages.length; i++) {
    const m = messages[i] as FetchedMessage;
    keyBytes += m.key?.byteLength ?? 0;
    valueBytes += m.value?.byteLength ?? 0;
    headerBytes += writer.headerBytes(m.headers, m.value === null);
  }
  writer.begin({ count: messages.length - from, keyBytes, valueBytes, headerBytes });
  for (let i = from; i < messages.length; i++) {
    const m = messages[i] as FetchedMessage;
    // A null value (a delete in a compacted topic) is marked on the record,
    // not by a header a producer could also set.
    writer.append(offsetOf(m.offset, fetched), timestampOf(m, fetched), m.key, m.value, m.headers);
  }
  return from;
}

function timestampOf(m: FetchedMessage, batch: FetchedSpan): number {
  const n = Number(m.timestamp);
  if (!Number.isSafeInteger(n)) throw timestampUnsafe(batch, m.offset, m.timestamp);
  return n;
}
