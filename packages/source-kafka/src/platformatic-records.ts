import type { ColumnsWriter } from '@thalweg/connector-core';
import type { FetchedColumns, FetchedSpan } from './consumer-port.js';
import { describePartition, timestampUnsafe } from './errors.js';
import {
  COMPRESSION,
  controlType,
  recordBatchesOf,
  RecordIndex,
  type RecordBatchView,
} from './kafka-record-batches.js';

/*
 * A partition of a Fetch response as the adapter's own parser leaves it
 * (platformatic-raw-fetch.ts): the records stay the bytes the broker sent.
 */

export interface WireAbortedTransaction {
  readonly producerId: bigint;
  readonly firstOffset: bigint;
}

export interface WirePartition {
  readonly partitionIndex: number;
  readonly errorCode: number;
  readonly highWatermark: bigint;
  readonly abortedTransactions: readonly WireAbortedTransaction[] | null;
  /** The partition's record batches as sent; null or empty when there are none. */
  readonly records: Buffer | null;
  /**
   * Gives `records`' buffer back to the fetcher's pool: called once they are
   * decoded into columns, or not wanted; nothing reads them after. Later
   * calls do nothing.
   */
  readonly release: () => void;
}

/** Decompresses a batch's records: `codec` is the batch's compression bits (1 gzip, 2 snappy, 3 lz4, 4 zstd). */
export type Decompress = (codec: number, bytes: Buffer) => Buffer;

/** Record batch attributes (Kafka's message format v2). */
const LOG_APPEND_TIME = 0x08;
const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;
/** The control record type of an abort marker. */
const ABORT_MARKER = 0;

/**
 * Which batches of a read_committed fetch belong to aborted transactions.
 * The broker lists each aborted transaction that overlaps the fetch by its
 * producer and first offset; a producer's batches are aborted from that
 * offset up to its abort marker. The marker may lie past this response (a
 * transaction larger than the fetch), so a producer with no marker here
 * stays aborted to the end of it (what Kafka's Java consumer does; the
 * client's own filter, in @platformatic/kafka 2.12.1, keeps those batches).
 */
function abortedBatches(
  part: WirePartition,
  batches: readonly RecordBatchView[],
): Set<RecordBatchView> {
  const aborted = new Set<RecordBatchView>();
  if (part.abortedTransactions === null || part.abortedTransactions.length === 0) return aborted;
  const pending = [...part.abortedTransactions].sort((a, b) =>
    a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0,
  );
  const open = new Set<bigint>();
  let next = 0;
  for (const batch of batches) {
    while (
      next < pending.length &&
      (pending[next] as WireAbortedTransaction).firstOffset <= batch.firstOffset
    ) {
      open.add((pending[next] as WireAbortedTransaction).producerId);
      next++;
    }
    if ((batch.attributes & CONTROL) !== 0) {
      if (controlType(batch) === ABORT_MARKER) open.delete(batch.producerId);
      continue;
    }
    if ((batch.attributes & TRANSACTIONAL) !== 0 && open.has(batch.producerId)) aborted.add(batch);
  }
  return aborted;
}

/**
 * One partition of a fetch made at `position` (the next offset to read), as
 * the port's batch, or null if the fetch returned nothing at or after it.
 *
 * The batch starts at `position`: Kafka answers with whole record batches,
 * so records before it are dropped here, and offsets between it and the
 * first record returned hold nothing a read_committed consumer would see
 * (aborted, compacted away, or transaction markers). It ends at the last
 * offset of the last complete record batch returned, markers and aborted
 * batches included, so the next fetch starts after them. Control records
 * and aborted transactions are not records. Timestamps are the record's
 * own, or the batch's append time when the topic stamps records on append.
 * The batch's `write` decodes the records straight from the response's
 * bytes into columns, with no object per record, then gives the bytes back
 * (`part.release`); it may be called once.
 */
export function fetchedBatch(
  topic: string,
  position: bigint,
  part: WirePartition,
  decompress: Decompress,
): FetchedColumns | null {
  const where = { topic, partition: part.partitionIndex };
  const batches = part.records === null ? [] : recordBatchesOf(part.records, where);
  const aborted = abortedBatches(part, batches);
  let last = position - 1n;
  const kept: RecordBatchView[] = [];
  let count = 0;
  for (const batch of batches) {
    const end = batch.firstOffset + BigInt(batch.lastOffsetDelta);
    if (end > last) last = end;
    if ((batch.attributes & CONTROL) !== 0 || aborted.has(batch)) continue;
    kept.push(batch);
    count += batch.recordCount;
  }
  // Nothing to decode (nothing at or after the position, or only markers and aborted batches): the bytes go back now.
  if (kept.length === 0 || last < position) part.release();
  if (last < position) return null;
  const span = {
    topic,
    partition: part.partitionIndex,
    firstOffset: String(position),
    lastOffset: String(last),
    highWatermark: String(part.highWatermark),
  };
  let written = false;
  return {
    kind: 'columns',
    ...span,
    count,
    write: (writer, start) => {
      // The records' buffer goes back to the pool after this: a second write would read another fetch's bytes.
      if (written)
        throw new Error(`${describePartition(where)}: a fetched batch was written twice`);
      written = true;
      try {
        return writeKept(span, kept, decompress, writer, start);
      } finally {
        part.release();
      }
    },
  };
}

/** A kept batch's records, decompressed, and where each of them lies. */
interface Indexed {
  readonly batch: RecordBatchView;
  readonly records: Buffer;
  readonly index: RecordIndex;
}

/**
 * The indexes `writeKept` fills, one per batch of a call, kept for the
 * next call: a call runs to its end without yielding, so no two share one.
 */
const INDEXES: RecordIndex[] = [];

/**
 * The kept batches' records at `start` or after into `writer`: each batch
 * indexed (and decompressed) once, the sizes summed, then the records
 * appended. Returns how many lay before `start`. The caller has checked
 * that the span's last offset is below 2^53, so every offset is.
 */
function writeKept(
  span: FetchedSpan,
  kept: readonly RecordBatchView[],
  decompress: Decompress,
  writer: ColumnsWriter,
  start: number,
): number {
  const indexed: Indexed[] = [];
  let skipped = 0;
  let count = 0;
  let keyBytes = 0;
  let valueBytes = 0;
  let headerBytes = 0;
  for (const batch of kept) {
    const codec = batch.attributes & COMPRESSION;
    const records = codec === 0 ? batch.body : decompress(codec, batch.body);
    const index = INDEXES[indexed.length] ?? new RecordIndex();
    INDEXES[indexed.length] = index;
    index.read(records, batch.recordCount, span, batch.firstOffset);
    indexed.push({ batch, records, index });
    const base = Number(batch.firstOffset);
    for (let i = 0; i < index.count; i++) {
      if (base + index.offsetDelta(i) < start) {
        skipped++;
        continue;
      }
      count++;
      keyBytes += index.keyBytes(i);
      valueBytes += index.valueBytes(i);
      const headers = index.headerList(i);
      const tombstone = index.valueIsNull(i);
      if (headers.length > 0 || tombstone) headerBytes += writer.headerBytes(headers, tombstone);
    }
  }
  writer.begin({ count, keyBytes, valueBytes, headerBytes });
  for (const { batch, records, index } of indexed) {
    const base = Number(batch.firstOffset);
    const appended = (batch.attributes & LOG_APPEND_TIME) !== 0;
    const first = Number(appended ? batch.maxTimestamp : batch.firstTimestamp);
    for (let i = 0; i < index.count; i++) {
      const offset = base + index.offsetDelta(i);
      if (offset < start) continue;
      const timestamp = appended ? first : first + (index.timestampDeltas[i] as number);
      if (!Number.isSafeInteger(timestamp)) throw timestampUnsafe(span, offset, timestamp);
      index.appendTo(writer, records, i, offset, timestamp);
    }
    // Header values are views of the response: not kept past this call.
    index.headers.length = 0;
  }
  return skipped;
}
