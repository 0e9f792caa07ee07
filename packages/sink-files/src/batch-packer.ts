import {
  columnarOf,
  columnsIn,
  columnsProblem,
  HEADERS_UNENCODABLE,
  HeaderEncoder,
  INT64_HI as HI,
  INT64_LO as LO,
  MAX_COLUMN_BYTES,
  RecordIdHasher,
  type ColumnarBatch,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { checkSourceBatch, checkSpan } from './batch-check.js';
import type { BufferPool } from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import { packLayout, type PackedBatch } from './packed-batch.js';

const TWO_32 = 0x1_0000_0000;

/** A packed batch and what the receipt reports for it. */
export interface Packed {
  readonly batch: PackedBatch;
  /** Key, value and header (name and value) bytes as the source delivered them. */
  readonly payloadBytes: number;
}

/**
 * Checks a source batch and packs it (packed-batch.ts), on the submitting
 * thread, in two passes over the records and with no per-record allocation
 * (a header name is encoded once, then cached): the first pass checks every
 * record and sums the column sizes (headers, when a record has any, are
 * encoded into a reused scratch buffer as it goes), then one buffer is
 * taken from the pool and the second pass copies keys and values into it.
 *
 * The checks are those of `checkSourceBatch`, inlined. On the first problem
 * the batch is handed to `checkSourceBatch` itself, so a refusal is the same
 * error, naming the field and offset, whichever path found it.
 *
 * The record id is no longer stored (raw keeps everything it is computed
 * from), but a batch whose ids could never be computed (a topic UTF-8
 * cannot encode unambiguously) is still refused here, once per topic,
 * rather than by every secondary later.
 */
export class BatchPacker {
  private readonly headers = new HeaderEncoder();
  private headerEnds = new Int32Array(1024);
  private readonly topicsChecked = new Set<string>();

  constructor(
    private readonly cluster: string,
    private readonly pool: BufferPool,
  ) {}

  pack(batch: SourceBatch): Packed {
    const span = checkSpan(batch.span, 'batch.span');
    this.checkTopic(span.topic);
    const columnar = columnarOf(batch);
    if (columnar !== null) return this.packColumns(columnar);
    const records: readonly SourceRecord[] = batch.records;
    if (!isArray(records)) return refuse(batch);
    const n = records.length;
    if (this.headerEnds.length < n + 1) this.headerEnds = new Int32Array(n + 1);
    const ends = this.headerEnds;
    ends[0] = 0;
    this.headers.reset();
    let previous = -1;
    let keyBytes = 0;
    let valueBytes = 0;
    let headerBytes = 0;
    let nullKeys = 0;
    for (let i = 0; i < n; i++) {
      const r = records[i] as SourceRecord | null;
      if (typeof r !== 'object' || r === null) return refuse(batch);
      const offset = r.offset;
      if (
        !Number.isSafeInteger(offset) ||
        offset < span.start ||
        offset >= span.end ||
        offset <= previous ||
        !Number.isSafeInteger(r.timestamp)
      ) {
        return refuse(batch);
      }
      previous = offset;
      const key: unknown = r.key;
      if (key === null) nullKeys++;
      else if (key instanceof Uint8Array) keyBytes += key.byteLength;
      else return refuse(batch);
      const value: unknown = r.value;
      if (!(value instanceof Uint8Array)) return refuse(batch);
      valueBytes += value.byteLength;
      const tombstone: unknown = r.tombstone;
      if (tombstone !== undefined && (tombstone !== true || value.byteLength !== 0)) {
        return refuse(batch);
      }
      const headers: unknown = r.headers;
      if (!isArray(headers)) return refuse(batch);
      headerBytes =
        (headers as readonly unknown[]).length === 0 && tombstone !== true
          ? headerBytes
          : this.headers.write(headers as readonly unknown[], tombstone === true);
      if (headerBytes === HEADERS_UNENCODABLE) return refuse(batch);
      if (headerBytes < 0) throw columnTooLarge('headers', offset);
      ends[i + 1] = headerBytes;
    }
    if (keyBytes > MAX_COLUMN_BYTES) tooLarge(records, 'key');
    if (valueBytes > MAX_COLUMN_BYTES) tooLarge(records, 'value');

    const at = packLayout(n, keyBytes, valueBytes, headerBytes);
    const buffer = this.pool.take(at.total);
    const ints = new Int32Array(buffer, 0, 4 * n);
    const keyOffsets = new Int32Array(buffer, at.keyOffsets, n + 1);
    const valueOffsets = new Int32Array(buffer, at.valueOffsets, n + 1);
    const validity = new Uint8Array(buffer, at.validity, at.validityBytes);
    const bytes = new Uint8Array(buffer);
    // A pooled buffer holds old bytes: write every byte the envelope reads.
    keyOffsets[0] = 0;
    valueOffsets[0] = 0;
    if (nullKeys > 0) validity.fill(0);
    const ts = 2 * n;
    let k = at.keys;
    let v = at.values;
    for (let i = 0; i < n; i++) {
      const r = records[i] as SourceRecord;
      // int64 as two int32 halves: no BigInt per value. Exact for safe
      // integers, negative timestamps included (two's complement halves).
      const offset = r.offset;
      const offsetLow = offset >>> 0;
      ints[2 * i + LO] = offsetLow;
      ints[2 * i + HI] = (offset - offsetLow) / TWO_32;
      const timestamp = r.timestamp;
      const timestampLow = timestamp >>> 0;
      ints[ts + 2 * i + LO] = timestampLow;
      ints[ts + 2 * i + HI] = (timestamp - timestampLow) / TWO_32;
      const key = r.key;
      if (key !== null) {
        bytes.set(key, k);
        k += key.byteLength;
        if (nullKeys > 0) validity[i >> 3] = (validity[i >> 3] ?? 0) | (1 << (i & 7));
      }
      keyOffsets[i + 1] = k - at.keys;
      const value = r.value;
      bytes.set(value, v);
      v += value.byteLength;
      valueOffsets[i + 1] = v - at.values;
    }
    new Int32Array(buffer, at.headerOffsets, n + 1).set(ends.subarray(0, n + 1));
    if (headerBytes > 0) bytes.set(this.headers.written(), at.headers);
    return {
      batch: { span, ...columnsIn(at, nullKeys, buffer) },
      payloadBytes: keyBytes + valueBytes + this.headers.payload,
    };
  }

  /**
   * A columnar batch (connector-core columnar-batch.ts): its columns are
   * already raw's layout, so packing is whole regions copied into a pooled
   * buffer, with no per-record work but the checks of its offsets and
   * timestamps, the same checks the record path makes.
   */
  private packColumns(batch: ColumnarBatch): Packed {
    const span = batch.span;
    const problem = columnsProblem(batch);
    if (problem !== null) {
      throw new RawSinkError('TWG_RAW_BATCH_INVALID', problem.reason, {
        field: problem.field,
        offset: problem.offset,
      });
    }
    const at = packLayout(batch.count, batch.keyBytes(), batch.valueBytes(), batch.headerBytes());
    const buffer = this.pool.take(at.total);
    const nullKeys = batch.writeColumns(buffer, at);
    return {
      batch: { span, ...columnsIn(at, nullKeys, buffer) },
      payloadBytes: batch.payloadBytes(),
    };
  }

  private checkTopic(topic: string): void {
    if (this.topicsChecked.has(topic)) return;
    try {
      new RecordIdHasher(this.cluster, topic, 0);
    } catch (cause) {
      throw new RawSinkError(
        'TWG_RAW_BATCH_INVALID',
        `no record id can be computed for this topic: ${reasonOf(cause)}`,
        { field: 'batch.span.topic' },
        cause,
      );
    }
    this.topicsChecked.add(topic);
  }
}

/** The detailed refusal of a batch the packer's inlined checks stopped at. */
function refuse(batch: SourceBatch): never {
  checkSourceBatch(batch);
  // Unreachable while the inlined checks and checkSourceBatch agree.
  throw new RawSinkError(
    'TWG_RAW_BATCH_INVALID',
    'the packer refused a record the batch check accepts',
    { field: 'batch.records' },
  );
}

function tooLarge(records: readonly SourceRecord[], field: 'key' | 'value'): never {
  let total = 0;
  for (const r of records) {
    total += r[field]?.byteLength ?? 0;
    if (total > MAX_COLUMN_BYTES) throw columnTooLarge(field, r.offset);
  }
  throw columnTooLarge(field, records.at(-1)?.offset ?? 0);
}

function columnTooLarge(field: string, offset: number): RawSinkError {
  return new RawSinkError(
    'TWG_RAW_BATCH_INVALID',
    `the batch's ${field} column would exceed ${MAX_COLUMN_BYTES} bytes (i32 offsets); ` +
      'have the source deliver smaller batches',
    { field, offset },
  );
}

/** Array.isArray without its `any[]` narrowing: this only checks a caller's claim. */
function isArray(value: unknown): boolean {
  return Array.isArray(value);
}
