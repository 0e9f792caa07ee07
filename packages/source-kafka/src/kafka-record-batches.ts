import { crc32c } from '@node-rs/crc32';
import type { ColumnsWriter } from '@thalweg/connector-core';
import type { FetchedHeader } from './consumer-port.js';
import { KafkaSourceError } from './errors.js';

/*
 * Kafka's record batches (message format v2, Kafka 0.11 and later) read
 * straight from the bytes of a fetch, with no object per record: a batch's
 * header is read into a view, its records into a reusable index of numbers
 * (where each key, value and header list lies), from which the source's
 * column writer copies. The layout is Kafka's own (the protocol guide,
 * "Record Batch"); nothing here depends on a client.
 */

/** One record batch of a fetch; its records are not decoded. */
export interface RecordBatchView {
  readonly firstOffset: bigint;
  readonly lastOffsetDelta: number;
  readonly attributes: number;
  readonly firstTimestamp: bigint;
  readonly maxTimestamp: bigint;
  readonly producerId: bigint;
  readonly recordCount: number;
  /** The records' bytes, compressed as `attributes & COMPRESSION` says. */
  readonly body: Buffer;
}

/** A partition of a fetch, for the errors that name it. */
export interface BatchSource {
  readonly topic: string;
  readonly partition: number;
}

/** Batch attributes: the compression codec's bits. */
export const COMPRESSION = 0x07;
/** From the first offset through the record count: what precedes a batch's records. */
const BATCH_HEAD = 61;
/** The first offset and the length field: the batch length counts from after them. */
const LENGTH_END = 12;
/** Where a batch's CRC-32C lies. */
const CRC_AT = 17;
/** Where the attributes lie: the CRC covers the bytes from there to the batch's end. */
const ATTRIBUTES_AT = 21;

function corrupt(where: BatchSource, offset: bigint | number, reason: string): KafkaSourceError {
  return new KafkaSourceError(
    'TWG_KAFKA_RECORD_INVALID',
    `${where.topic}/${where.partition} record batch at offset ${offset}: ${reason}`,
    { partition: { topic: where.topic, partition: where.partition } },
  );
}

/**
 * A record batch whose bytes do not give the CRC-32C it carries: damaged in
 * the broker's log, in its memory or on the way. Not a refusal of the
 * record: the same bytes fetched again may be sound (the consumer fetches
 * the partition again, within its outage bound).
 */
export class BatchChecksumMismatch extends Error {
  constructor(where: BatchSource, firstOffset: bigint, said: number, found: number) {
    super(
      `${where.topic}/${where.partition} record batch at offset ${firstOffset} fails its CRC-32C check: ` +
        `it says ${hex(said)}, its bytes give ${hex(found)}`,
    );
    this.name = 'BatchChecksumMismatch';
  }
}

function hex(crc: number): string {
  return `0x${crc.toString(16).padStart(8, '0')}`;
}

/**
 * The complete record batches in `bytes` (a partition's records in a fetch
 * response), in order. A batch cut short at the end is left out: the broker
 * stops at the fetch's byte limit mid-batch, and the next fetch, which
 * starts after the last complete batch, asks for it again. A batch in
 * another message format, or shorter than its own header, is refused by
 * offset; one whose CRC-32C does not match its bytes is a
 * `BatchChecksumMismatch` (checked as Kafka's Java consumer checks by
 * default: every complete batch, before any of its bytes are read).
 */
export function recordBatchesOf(bytes: Buffer, where: BatchSource): RecordBatchView[] {
  const batches: RecordBatchView[] = [];
  let at = 0;
  while (bytes.length - at >= LENGTH_END) {
    const firstOffset = bytes.readBigInt64BE(at);
    const end = at + LENGTH_END + bytes.readInt32BE(at + 8);
    if (end > bytes.length) break;
    if (end < at + BATCH_HEAD) throw corrupt(where, firstOffset, 'shorter than a batch header');
    const magic = bytes.readInt8(at + 16);
    if (magic !== 2) {
      throw corrupt(
        where,
        firstOffset,
        `message format v${magic}: thalweg reads format v2 (Kafka 0.11 and later)`,
      );
    }
    const said = bytes.readUInt32BE(at + CRC_AT);
    const found = crc32c(bytes.subarray(at + ATTRIBUTES_AT, end)) >>> 0;
    if (found !== said) throw new BatchChecksumMismatch(where, firstOffset, said, found);
    batches.push({
      firstOffset,
      attributes: bytes.readInt16BE(at + ATTRIBUTES_AT),
      lastOffsetDelta: bytes.readInt32BE(at + 23),
      firstTimestamp: bytes.readBigInt64BE(at + 27),
      maxTimestamp: bytes.readBigInt64BE(at + 35),
      producerId: bytes.readBigInt64BE(at + 43),
      recordCount: bytes.readInt32BE(at + 57),
      body: bytes.subarray(at + BATCH_HEAD, end),
    });
    at = end;
  }
  return batches;
}

/** Thrown by the readers below past the end of a batch's records. */
class Truncated extends Error {}

/** The position the varint readers read at (one reader at a time: all of this is synchronous). */
let at = 0;

function byteAt(b: Uint8Array): number {
  const byte = b[at++];
  if (byte === undefined) throw new Truncated();
  return byte;
}

/** A zig-zag varint or varlong, exact to 2^53. */
function varint(b: Uint8Array): number {
  let byte = byteAt(b);
  if ((byte & 0x80) === 0) return (byte >>> 1) ^ -(byte & 1);
  let u = byte & 0x7f;
  let scale = 128;
  do {
    byte = byteAt(b);
    u += (byte & 0x7f) * scale;
    scale *= 128;
  } while ((byte & 0x80) !== 0 && scale <= 2 ** 63);
  if ((byte & 0x80) !== 0) throw new Truncated();
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

/** Fields per record in `RecordIndex.ints`. */
const STRIDE = 6;
const NO_HEADERS: readonly FetchedHeader[] = [];
const utf8 = new TextDecoder();

/**
 * Where each record of one batch's (decompressed) records lies: offset
 * delta, timestamp delta, key and value as start and length (length -1 for
 * null), and the header list of the records that have one. Numbers in two
 * typed arrays, not an object per record.
 */
export class RecordIndex {
  ints = new Int32Array(0);
  timestampDeltas = new Float64Array(0);
  headers: (readonly FetchedHeader[] | undefined)[] = [];
  count = 0;

  offsetDelta(i: number): number {
    return this.ints[i * STRIDE] as number;
  }

  /** Appends record `i` to `writer`, copying its key and value from `records` (no view per record). */
  appendTo(
    writer: ColumnsWriter,
    records: Buffer,
    i: number,
    offset: number,
    timestamp: number,
  ): void {
    const o = i * STRIDE;
    const ints = this.ints;
    writer.appendFrom(
      offset,
      timestamp,
      records,
      ints[o + 1] as number,
      ints[o + 2] as number,
      ints[o + 3] as number,
      ints[o + 4] as number,
      this.headerList(i),
    );
  }

  /** Whether record `i` has no value at all (a tombstone). */
  valueIsNull(i: number): boolean {
    return (this.ints[i * STRIDE + 4] as number) < 0;
  }

  keyBytes(i: number): number {
    return Math.max(0, this.ints[i * STRIDE + 2] as number);
  }

  valueBytes(i: number): number {
    return Math.max(0, this.ints[i * STRIDE + 4] as number);
  }

  headerList(i: number): readonly FetchedHeader[] {
    return (this.ints[i * STRIDE + 5] as number) === 0
      ? NO_HEADERS
      : (this.headers[i] ?? NO_HEADERS);
  }

  /**
   * Indexes the `count` records of `records`. A record that runs past the
   * batch, or whose fields do not fill its declared length, is refused,
   * naming the batch's first offset.
   */
  read(records: Buffer, count: number, where: BatchSource, firstOffset: bigint): void {
    // A record takes at least one byte: a larger count is not a count.
    if (count < 0 || count > records.length) {
      throw corrupt(where, firstOffset, `record count ${count} for ${records.length} bytes`);
    }
    this.reserve(count);
    this.headers.length = 0;
    at = 0;
    try {
      for (let i = 0; i < count; i++) {
        const length = varint(records);
        const end = at + length;
        at += 1; // attributes, unused
        this.timestampDeltas[i] = varint(records);
        const o = i * STRIDE;
        this.ints[o] = varint(records);
        at = this.field(records, o + 1);
        at = this.field(records, o + 3);
        const headerCount = varint(records);
        this.ints[o + 5] = headerCount;
        if (headerCount > 0) this.headers[i] = headersAt(records, headerCount);
        if (at !== end || end > records.length) throw new Truncated();
      }
    } catch (error) {
      if (!(error instanceof Truncated)) throw error;
      throw corrupt(where, firstOffset, 'a record runs past its batch or its own length');
    }
    this.count = count;
  }

  /** Reads a length-prefixed field at `at` into slots `o` (start) and `o + 1` (length); its end. */
  private field(records: Buffer, o: number): number {
    const length = varint(records);
    if (length < -1) throw new Truncated();
    this.ints[o] = at;
    this.ints[o + 1] = length;
    return at + Math.max(0, length);
  }

  private reserve(count: number): void {
    if (this.timestampDeltas.length >= count) return;
    this.ints = new Int32Array(STRIDE * count);
    this.timestampDeltas = new Float64Array(count);
  }
}

function headersAt(records: Buffer, count: number): FetchedHeader[] {
  const list: FetchedHeader[] = [];
  for (let h = 0; h < count; h++) {
    const nameLength = varint(records);
    if (nameLength < 0 || at + nameLength > records.length) throw new Truncated();
    const name = utf8.decode(records.subarray(at, at + nameLength));
    at += nameLength;
    const valueLength = varint(records);
    if (valueLength < -1 || at + valueLength > records.length) throw new Truncated();
    const value = valueLength < 0 ? null : records.subarray(at, at + valueLength);
    at += Math.max(0, valueLength);
    list.push([name, value]);
  }
  return list;
}

/** The control record type of a control batch (its first record's key: version int16, type int16). */
export function controlType(batch: RecordBatchView): number | null {
  at = 0;
  try {
    varint(batch.body); // length
    at += 1; // attributes
    varint(batch.body); // timestamp delta
    varint(batch.body); // offset delta
    const keyLength = varint(batch.body);
    if (keyLength < 4 || at + 4 > batch.body.length) return null;
    return batch.body.readInt16BE(at + 2);
  } catch (error) {
    if (error instanceof Truncated) return null;
    throw error;
  }
}
