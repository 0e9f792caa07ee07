import type { ColumnsWriter } from '@thalweg/connector-core';
import type { FetchedColumns, FetchedHeader, FetchedSpan } from './consumer-port.js';
import { KafkaSourceError } from './errors.js';

/*
 * The parts of @platformatic/kafka's decoded Fetch response this adapter
 * reads, declared here so that no client type reaches the port.
 */

export interface WireRecord {
  readonly timestampDelta: bigint;
  readonly offsetDelta: number;
  readonly key: Uint8Array | null;
  readonly value: Uint8Array | null;
  readonly headers: readonly (readonly [Uint8Array | null, Uint8Array | null])[];
}

export interface WireBatch {
  readonly firstOffset: bigint;
  readonly lastOffsetDelta: number;
  readonly attributes: number;
  readonly firstTimestamp: bigint;
  readonly maxTimestamp: bigint;
  readonly producerId: bigint;
  readonly records: readonly WireRecord[];
}

export interface WireAbortedTransaction {
  readonly producerId: bigint;
  readonly firstOffset: bigint;
}

export interface WirePartition {
  readonly partitionIndex: number;
  readonly errorCode: number;
  readonly highWatermark: bigint;
  readonly logStartOffset: bigint;
  readonly abortedTransactions: readonly WireAbortedTransaction[] | null;
  readonly records?: readonly WireBatch[] | null;
}

/** Record batch attributes (Kafka's message format v2). */
const LOG_APPEND_TIME = 0x08;
const TRANSACTIONAL = 0x10;
const CONTROL = 0x20;
/** The control record type of an abort marker (its key: version int16, type int16). */
const ABORT_MARKER = 0;

const utf8 = new TextDecoder();

function controlType(batch: WireBatch): number | null {
  const key = batch.records[0]?.key;
  if (key === null || key === undefined || key.byteLength < 4) return null;
  return new DataView(key.buffer, key.byteOffset, key.byteLength).getInt16(2);
}

/**
 * Which batches of a read_committed fetch belong to aborted transactions.
 * The broker lists each aborted transaction that overlaps the fetch by its
 * producer and first offset; a producer's batches are aborted from that
 * offset up to its abort marker. The marker may lie past this response (a
 * transaction larger than the fetch), so a producer with no marker here
 * stays aborted to the end of it. The client's own filter keeps those
 * batches; this one drops them (what Kafka's Java consumer does).
 */
function abortedBatches(part: WirePartition, batches: readonly WireBatch[]): Set<WireBatch> {
  const aborted = new Set<WireBatch>();
  const pending = [...(part.abortedTransactions ?? [])].sort((a, b) =>
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

const NO_HEADERS: readonly FetchedHeader[] = [];

function headersOf(record: WireRecord): readonly FetchedHeader[] {
  if (record.headers.length === 0) return NO_HEADERS;
  const list: FetchedHeader[] = [];
  for (const [name, value] of record.headers) {
    list.push([name === null ? '' : utf8.decode(name), value]);
  }
  return list;
}

/**
 * One partition of a fetch made at `position` (the next offset to read), as
 * the port's batch, or null if the fetch returned nothing at or after it.
 *
 * The batch starts at `position`: Kafka answers with whole record batches,
 * so records before it are dropped here, and offsets between it and the
 * first record returned hold nothing a read_committed consumer would see
 * (aborted, compacted away, or transaction markers). It ends at the last
 * offset of the last record batch returned, markers and aborted batches
 * included, so the next fetch starts after them. Control records and aborted
 * transactions are not records. Timestamps are the record's own, or the
 * batch's append time when the topic stamps records on append. The records
 * are written as columns by the batch's `write`, with no object per record.
 */
export function fetchedBatch(
  topic: string,
  position: bigint,
  part: WirePartition,
): FetchedColumns | null {
  const batches = part.records ?? [];
  const aborted = abortedBatches(part, batches);
  let last = position - 1n;
  const kept: WireBatch[] = [];
  let count = 0;
  for (const batch of batches) {
    const end = batch.firstOffset + BigInt(batch.lastOffsetDelta);
    if (end > last) last = end;
    if ((batch.attributes & CONTROL) !== 0 || aborted.has(batch)) continue;
    kept.push(batch);
    count += batch.records.length;
  }
  if (last < position) return null;
  const span = {
    topic,
    partition: part.partitionIndex,
    firstOffset: String(position),
    lastOffset: String(last),
    highWatermark: String(part.highWatermark),
  };
  return {
    kind: 'columns',
    ...span,
    count,
    write: (writer, start) => writeKept(span, kept, writer, start),
  };
}

/**
 * The kept record batches' records at `start` or after into `writer`, two
 * passes (sizes, then records); how many lay before `start`. The caller
 * has checked that the span's last offset is below 2^53, so every offset is.
 */
function writeKept(
  span: FetchedSpan,
  kept: readonly WireBatch[],
  writer: ColumnsWriter,
  start: number,
): number {
  let skipped = 0;
  let keyBytes = 0;
  let valueBytes = 0;
  let headerBytes = 0;
  for (const batch of kept) {
    const base = Number(batch.firstOffset);
    for (const record of batch.records) {
      if (base + record.offsetDelta < start) {
        skipped++;
        continue;
      }
      keyBytes += record.key?.byteLength ?? 0;
      valueBytes += record.value?.byteLength ?? 0;
      if (record.headers.length > 0 || record.value === null) {
        headerBytes += writer.headerBytes(headersOf(record), record.value === null);
      }
    }
  }
  let count = 0;
  for (const batch of kept) count += batch.records.length;
  writer.begin({ count: count - skipped, keyBytes, valueBytes, headerBytes });
  for (const batch of kept) {
    const base = Number(batch.firstOffset);
    const appended = (batch.attributes & LOG_APPEND_TIME) !== 0;
    const first = Number(appended ? batch.maxTimestamp : batch.firstTimestamp);
    for (const record of batch.records) {
      const offset = base + record.offsetDelta;
      if (offset < start) continue;
      const timestamp = appended ? first : first + Number(record.timestampDelta);
      if (!Number.isSafeInteger(timestamp)) throw badTimestamp(span, offset, timestamp);
      writer.append(offset, timestamp, record.key, record.value, headersOf(record));
    }
  }
  return skipped;
}

function badTimestamp(span: FetchedSpan, offset: number, timestamp: number): KafkaSourceError {
  return new KafkaSourceError(
    'TWG_KAFKA_RECORD_INVALID',
    `${span.topic}/${span.partition} offset ${offset}: timestamp ${timestamp} is not an integer below 2^53 ms`,
    { partition: { topic: span.topic, partition: span.partition } },
  );
}
