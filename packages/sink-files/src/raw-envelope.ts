import type { OffsetSpan, SourceBatch, SourceRecord } from '@thalweg/connector-core';
import { readHeaders, type DecodedHeaders } from '@thalweg/stream-arrow';
import {
  Binary,
  Field,
  Int64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimestampMillisecond,
  type Data,
} from 'apache-arrow';
import { BatchPacker } from './batch-packer.js';
import { BufferPool } from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import { packLayout, type PackedBatch } from './packed-batch.js';

/**
 * The raw envelope: one Arrow record batch per source batch, holding exactly
 * what the source delivered, so every secondary can be derived again from
 * raw alone.
 *
 * | column      | type               | null | holds                                         |
 * |-------------|--------------------|------|-----------------------------------------------|
 * | `offset`    | int64              | no   | source offset                                 |
 * | `timestamp` | timestamp[ms, UTC] | no   | source timestamp, ms since the epoch          |
 * | `key`       | binary             | yes  | record key; null when the source had none     |
 * | `value`     | binary             | no   | payload as delivered (empty for a tombstone)  |
 * | `headers`   | binary             | no   | headers, tombstone mark (headers-codec.ts)    |
 *
 * No `_twg_record_id` column: the id (ADR 0003) is a pure function of the
 * cluster, topic, partition, offset and value, all of which raw stores, so
 * whoever builds rows from raw (a secondary's derivation, recovery)
 * computes it there. Hashing it here cost the submitting thread more than
 * everything else raw does per record.
 *
 * The span a batch accounts for (which can exceed its records: compaction,
 * transaction markers) and the cluster travel as schema metadata of the
 * batch: `twg.raw.span` (JSON `{topic, partition, start, end}`) and
 * `twg.raw.cluster`.
 */
export const RAW_ENVELOPE_FIELDS: readonly Field[] = Object.freeze([
  new Field('offset', new Int64(), false),
  new Field('timestamp', new TimestampMillisecond('UTC'), false),
  new Field('key', new Binary(), true),
  new Field('value', new Binary(), false),
  new Field('headers', new Binary(), false),
]);

export const RAW_SPAN_METADATA = 'twg.raw.span';
export const RAW_CLUSTER_METADATA = 'twg.raw.cluster';

/**
 * Encodes one source batch as a raw envelope batch. The batch is checked
 * first (as checkSourceBatch does): a bad record fails the whole batch with
 * its offset named, and no partial batch exists.
 */
export function encodeRawBatch(cluster: string, batch: SourceBatch): RecordBatch {
  const { batch: packed } = new BatchPacker(cluster, new BufferPool(0)).pack(batch);
  return envelopeOf(cluster, packed);
}

/** The envelope of a packed batch, with its span and cluster as schema metadata. */
export function envelopeOf(cluster: string, packed: PackedBatch): RecordBatch {
  const schema = rawSchema(
    new Map([
      [RAW_SPAN_METADATA, JSON.stringify(packed.span)],
      [RAW_CLUSTER_METADATA, cluster],
    ]),
  );
  return new RecordBatch(schema, envelopeData(packed));
}

/** The envelope's columns as views into the packed buffer: nothing is copied. */
export function envelopeData(packed: PackedBatch): Data<Struct> {
  const n = packed.count;
  const b = packed.buffer;
  const at = packLayout(n, packed.keyBytes, packed.valueBytes, packed.headerBytes);
  const binary = (offsets: number, data: number, bytes: number, validity?: Uint8Array) =>
    makeData({
      type: new Binary(),
      length: n,
      nullCount: validity === undefined ? 0 : packed.nullKeys,
      ...(validity === undefined ? {} : { nullBitmap: validity }),
      valueOffsets: new Int32Array(b, offsets, n + 1),
      data: new Uint8Array(b, data, bytes),
    });
  const children = [
    makeData({ type: new Int64(), length: n, data: new BigInt64Array(b, at.offsets, n) }),
    makeData({
      type: new TimestampMillisecond('UTC'),
      length: n,
      data: new BigInt64Array(b, at.timestamps, n),
    }),
    binary(
      at.keyOffsets,
      at.keys,
      packed.keyBytes,
      packed.nullKeys > 0 ? new Uint8Array(b, at.validity, at.validityBytes) : undefined,
    ),
    binary(at.valueOffsets, at.values, packed.valueBytes),
    binary(at.headerOffsets, at.headers, packed.headerBytes),
  ];
  return makeData({ type: new Struct([...RAW_ENVELOPE_FIELDS]), length: n, children });
}

/** The envelope schema with the given metadata. */
export function rawSchema(metadata: Map<string, string> = new Map()): Schema {
  return new Schema([...RAW_ENVELOPE_FIELDS], metadata);
}

/** The records of an envelope batch, in its order. Keys, values and header values are views. */
export function decodeRawBatch(batch: RecordBatch, file?: string): SourceRecord[] {
  const rows = RawRows.of(batch, file);
  return Array.from({ length: rows.length }, (_, i) => rows.record(i));
}

/** The span an envelope batch accounts for, from its `twg.raw.span` metadata. */
export function rawBatchSpan(batch: RecordBatch, file?: string): OffsetSpan {
  const text = batch.schema.metadata.get(RAW_SPAN_METADATA);
  if (text === undefined) corrupt(file, `no ${RAW_SPAN_METADATA} metadata`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    return corrupt(file, `${RAW_SPAN_METADATA} is not JSON: ${reasonOf(cause)}`);
  }
  return spanFromJson(parsed, file, RAW_SPAN_METADATA);
}

/** A span read back from stored JSON, with every field checked. */
export function spanFromJson(value: unknown, file: string | undefined, what: string): OffsetSpan {
  const v = value as Partial<Record<keyof OffsetSpan, unknown>> | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    typeof v.topic === 'string' &&
    v.topic.length > 0 &&
    Number.isSafeInteger(v.partition) &&
    Number.isSafeInteger(v.start) &&
    Number.isSafeInteger(v.end) &&
    (v.start as number) >= 0 &&
    (v.end as number) > (v.start as number) &&
    (v.partition as number) >= 0;
  if (!ok) corrupt(file, `${what} is not a span: ${JSON.stringify(value)}`);
  return {
    topic: v.topic as string,
    partition: v.partition as number,
    start: v.start as number,
    end: v.end as number,
  };
}

/**
 * Row access to an envelope batch without materialising records: the read
 * path compares the stored content of overlapping copies and builds a
 * record only for the copy it yields. Construction checks the schema, every
 * offset and timestamp, and the value buffers, so a damaged batch fails
 * here, with the file named.
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * An int64 column as 32-bit words, so the per-row checks of every read
 * allocate no BigInt (they were most of a verified read's garbage); null on a
 * big-endian machine, which reads the BigInts.
 */
function int64Words(values: BigInt64Array): Int32Array | null {
  return LITTLE_ENDIAN ? new Int32Array(values.buffer, values.byteOffset, values.length * 2) : null;
}

/**
 * Row i as a number: exact whenever it is a safe integer, and never a safe
 * integer when the int64 is not one (|hi| >= 2^21 puts it at or past 2^53).
 */
function int64At(words: Int32Array | null, values: BigInt64Array, i: number): number {
  if (words === null) return Number(values[i] ?? 0n);
  return (words[2 * i + 1] ?? 0) * 4294967296 + ((words[2 * i] ?? 0) >>> 0);
}

export class RawRows {
  readonly length: number;
  private readonly offsets: Float64Array;
  private readonly timestamps: BigInt64Array;
  private readonly keys: BinaryColumn;
  private readonly values: BinaryColumn;
  private readonly headers: BinaryColumn;

  private constructor(
    batch: RecordBatch,
    private readonly file: string | undefined,
  ) {
    checkSchema(batch.schema, file);
    this.length = batch.numRows;
    const column = (i: number): Data => {
      const chunks = batch.getChildAt(i)?.data;
      const data: Data | undefined = chunks?.length === 1 ? chunks[0] : undefined;
      if (data?.length !== this.length) {
        corrupt(file, `column ${RAW_ENVELOPE_FIELDS[i]?.name ?? i} does not hold one value a row`);
      }
      return data;
    };
    const rawOffsets = int64s(column(0), 'offset', file);
    this.timestamps = int64s(column(1), 'timestamp', file);
    this.keys = BinaryColumn.of(column(2), 'key', true, file);
    this.values = BinaryColumn.of(column(3), 'value', false, file);
    this.headers = BinaryColumn.of(column(4), 'headers', false, file);
    this.offsets = new Float64Array(this.length);
    const offsetWords = int64Words(rawOffsets);
    const timestampWords = int64Words(this.timestamps);
    for (let i = 0; i < this.length; i++) {
      const offset = int64At(offsetWords, rawOffsets, i);
      if (!Number.isSafeInteger(offset) || offset < 0 || (i > 0 && offset <= this.offset(i - 1))) {
        corrupt(file, `row ${i}: offset ${String(rawOffsets[i])} is not an ascending safe offset`);
      }
      this.offsets[i] = offset;
    }
    for (let i = 0; i < this.length; i++) {
      if (!Number.isSafeInteger(int64At(timestampWords, this.timestamps, i))) {
        corrupt(
          file,
          `offset ${this.offset(i)}: timestamp ${String(this.timestamps[i])} is not a safe integer`,
        );
      }
    }
  }

  static of(batch: RecordBatch, file?: string): RawRows {
    return new RawRows(batch, file);
  }

  offset(i: number): number {
    return this.offsets[i] ?? Number.NaN;
  }

  timestamp(i: number): number {
    return Number(this.timestamps[i] ?? 0n);
  }

  key(i: number): Uint8Array | null {
    return this.keys.get(i);
  }

  value(i: number): Uint8Array {
    return this.values.get(i) ?? new Uint8Array(0);
  }

  /** The row's headers as stored (headers-codec.ts), not decoded. */
  headerBytes(i: number): Uint8Array {
    return this.headers.get(i) ?? new Uint8Array(0);
  }

  /**
   * The first field in which row `i` differs from row `j` of `other`, byte
   * for byte, or null when they hold the same record content (the offset is
   * the caller's to compare). Two stored copies of one offset must be equal:
   * the source delivers one record per offset.
   */
  difference(
    i: number,
    other: RawRows,
    j: number,
  ): 'key' | 'value' | 'timestamp' | 'headers' | null {
    const a = this.key(i);
    const b = other.key(j);
    if (a === null ? b !== null : b === null || !sameBytes(a, b)) return 'key';
    if (!sameBytes(this.value(i), other.value(j))) return 'value';
    if (this.timestamp(i) !== other.timestamp(j)) return 'timestamp';
    if (!sameBytes(this.headerBytes(i), other.headerBytes(j))) return 'headers';
    return null;
  }

  /** The first row whose offset is at least `offset` (binary search; offsets ascend). */
  lowerBound(offset: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offset(mid) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  record(i: number): SourceRecord {
    const offset = this.offset(i);
    let decoded: DecodedHeaders;
    try {
      decoded = readHeaders(this.headers.get(i) ?? new Uint8Array(0));
    } catch (cause) {
      return corrupt(this.file, `offset ${offset}: ${reasonOf(cause)}`);
    }
    const value = this.value(i);
    if (decoded.tombstone && value.byteLength !== 0) {
      corrupt(this.file, `offset ${offset}: a tombstone with a value of ${value.byteLength} bytes`);
    }
    const record = {
      offset,
      key: this.keys.get(i),
      value,
      timestamp: this.timestamp(i),
      headers: decoded.headers,
    };
    return decoded.tombstone ? { ...record, tombstone: true } : record;
  }
}

/** A binary column's buffers, read directly: a value is a view of the data buffer. */
class BinaryColumn {
  private constructor(
    private readonly offsets: Int32Array,
    private readonly data: Uint8Array,
    private readonly validity: Uint8Array | null,
    private readonly start: number,
  ) {}

  static of(data: Data, what: string, nullable: boolean, file: string | undefined): BinaryColumn {
    if (!nullable && data.nullCount > 0) corrupt(file, `${what} column holds nulls`);
    const offsets = data.valueOffsets as Int32Array | undefined;
    const values = data.values as Uint8Array | undefined;
    if (!(offsets instanceof Int32Array) || !(values instanceof Uint8Array)) {
      corrupt(file, `${what} column has no value buffers`);
    }
    if (offsets.length < data.length + 1) corrupt(file, `${what} column offsets are short`);
    let previous = offsets[0] ?? 0;
    if (previous < 0) corrupt(file, `${what} column offsets start below zero`);
    for (let i = 1; i <= data.length; i++) {
      const next = offsets[i] ?? -1;
      if (next < previous) corrupt(file, `${what} column offsets go backwards at row ${i}`);
      previous = next;
    }
    if (previous > values.byteLength) corrupt(file, `${what} column offsets run past its data`);
    const bitmap = data.nullCount > 0 ? (data.nullBitmap as Uint8Array | undefined) : undefined;
    if (data.nullCount > 0 && (bitmap === undefined || bitmap.byteLength * 8 < data.length)) {
      corrupt(file, `${what} column declares nulls without a validity bitmap`);
    }
    return new BinaryColumn(offsets, values, bitmap ?? null, data.offset);
  }

  get(i: number): Uint8Array | null {
    const bit = this.start + i;
    if (this.validity !== null && (((this.validity[bit >> 3] ?? 0) >> (bit & 7)) & 1) === 0) {
      return null;
    }
    return this.data.subarray(this.offsets[i] ?? 0, this.offsets[i + 1] ?? 0);
  }
}

function int64s(data: Data, what: string, file: string | undefined): BigInt64Array {
  const values = data.values as unknown;
  if (!(values instanceof BigInt64Array) || values.length < data.length) {
    corrupt(file, `${what} column does not hold one int64 a row`);
  }
  if (data.nullCount > 0) corrupt(file, `${what} column holds nulls`);
  return values;
}

function checkSchema(schema: Schema, file: string | undefined): void {
  const shape = (fields: readonly Field[]) =>
    fields.map((f) => `${f.name}: ${String(f.type)}${f.nullable ? '?' : ''}`).join(', ');
  const expected = shape(RAW_ENVELOPE_FIELDS);
  const actual = shape(schema.fields);
  if (actual !== expected) {
    corrupt(file, `schema {${actual}} is not the raw envelope {${expected}}`);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return (
    a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b)
  );
}

function corrupt(file: string | undefined, reason: string): never {
  throw new RawSinkError('TWG_RAW_SEGMENT_CORRUPT', reason, file === undefined ? {} : { file });
}
