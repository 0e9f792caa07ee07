import { RecordIdHasher, type SourceBatch, type SourceRecord } from '@thalweg/connector-core';
import { NULL_LENGTH } from '@thalweg/stream-arrow';
import { checkSourceBatch, checkSpan } from './batch-check.js';
import type { BufferPool } from './buffer-pool.js';
import { RawSinkError, reasonOf } from './errors.js';
import { packLayout, type PackedBatch } from './packed-batch.js';

/** Arrow's binary columns have i32 value offsets. */
const MAX_COLUMN_BYTES = 0x7fffffff;
/** With the u flag a surrogate pair is one code point, so this matches only unpaired ones. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Header names seen and their encoded prefixes; cleared when full (names repeat in practice). */
const HEADER_NAME_CACHE = 4096;
const TWO_32 = 0x1_0000_0000;
/** Which int32 of an int64 holds the low half, in the platform's byte order (Arrow's too). */
const LO = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

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
  private readonly headerNames = new Map<string, Uint8Array>();
  private headerScratch = new Uint8Array(16 * 1024);
  private headerEnds = new Int32Array(1024);
  private readonly topicsChecked = new Set<string>();
  /** Header name and value bytes of the batch being packed. */
  private headerPayload = 0;

  constructor(
    private readonly cluster: string,
    private readonly pool: BufferPool,
  ) {}

  pack(batch: SourceBatch): Packed {
    const span = checkSpan(batch.span, 'batch.span');
    this.checkTopic(span.topic);
    const records: readonly SourceRecord[] = batch.records;
    if (!isArray(records)) return refuse(batch);
    const n = records.length;
    if (this.headerEnds.length < n + 1) this.headerEnds = new Int32Array(n + 1);
    const ends = this.headerEnds;
    ends[0] = 0;
    this.headerPayload = 0;
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
      headerBytes = this.writeHeaders(
        headers as readonly unknown[],
        tombstone === true,
        headerBytes,
        batch,
        offset,
      );
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
    if (headerBytes > 0) bytes.set(this.headerScratch.subarray(0, headerBytes), at.headers);
    return {
      batch: {
        span,
        count: n,
        nullKeys,
        keyBytes,
        valueBytes,
        headerBytes,
        bytes: at.total,
        buffer,
      },
      payloadBytes: keyBytes + valueBytes + this.headerPayload,
    };
  }

  /**
   * Encodes a record's headers (and its tombstone mark) at `at` of the
   * scratch buffer (headers-codec.ts); returns the end. Allocates nothing
   * for a record without headers. Small copies are byte loops: for a few
   * bytes, a loop beats the fixed cost of TypedArray#set and DataView.
   */
  private writeHeaders(
    headers: readonly unknown[],
    tombstone: boolean,
    at: number,
    batch: SourceBatch,
    offset: number,
  ): number {
    let pos = at;
    if (tombstone) {
      if (pos + 4 > this.headerScratch.byteLength) this.growHeaders(pos + 4, offset);
      this.writeLength(pos, NULL_LENGTH);
      pos += 4;
    }
    const count = headers.length;
    for (let h = 0; h < count; h++) {
      const entry = headers[h];
      if (!isArray(entry)) return refuse(batch);
      const pair = entry as readonly unknown[];
      const name = pair[0];
      const value = pair[1];
      if (pair.length !== 2 || typeof name !== 'string') return refuse(batch);
      if (value !== null && !(value instanceof Uint8Array)) return refuse(batch);
      const prefix = this.headerPrefix(name) ?? refuse(batch);
      // Lengths in locals: a typed array's byteLength in a loop condition is
      // a getter call per iteration (measured: 150 ns a header).
      const prefixLength = prefix.byteLength;
      const valueLength = value === null ? 0 : value.byteLength;
      const end = pos + prefixLength + 4 + valueLength;
      if (end > this.headerScratch.byteLength) this.growHeaders(end, offset);
      const out = this.headerScratch;
      for (let i = 0; i < prefixLength; i++) out[pos + i] = prefix[i] ?? 0;
      pos += prefixLength;
      this.writeLength(pos, value === null ? NULL_LENGTH : valueLength);
      pos += 4;
      if (value !== null) {
        if (valueLength > 32) out.set(value, pos);
        else for (let i = 0; i < valueLength; i++) out[pos + i] = value[i] ?? 0;
      }
      pos += valueLength;
      this.headerPayload += prefixLength - 4 + valueLength;
    }
    return pos;
  }

  /** A u32 big-endian at `pos` of the header scratch (which has room for it). */
  private writeLength(pos: number, n: number): void {
    const out = this.headerScratch;
    out[pos] = n >>> 24;
    out[pos + 1] = n >>> 16;
    out[pos + 2] = n >>> 8;
    out[pos + 3] = n;
  }

  /**
   * A header name's encoding as the codec starts an entry with it (u32 BE
   * length, then UTF-8), or null when UTF-8 cannot encode it (a lone
   * surrogate).
   */
  private headerPrefix(name: string): Uint8Array | null {
    const known = this.headerNames.get(name);
    if (known !== undefined) return known;
    if (LONE_SURROGATE.test(name)) return null;
    const utf8 = Buffer.from(name, 'utf8');
    const prefix = Buffer.allocUnsafeSlow(4 + utf8.byteLength);
    prefix.writeUInt32BE(utf8.byteLength, 0);
    utf8.copy(prefix, 4);
    if (this.headerNames.size >= HEADER_NAME_CACHE) this.headerNames.clear();
    this.headerNames.set(name, prefix);
    return prefix;
  }

  private growHeaders(needed: number, offset: number): void {
    if (needed > MAX_COLUMN_BYTES) throw columnTooLarge('headers', offset);
    const grown = new Uint8Array(
      Math.min(MAX_COLUMN_BYTES, Math.max(needed, 2 * this.headerScratch.byteLength)),
    );
    grown.set(this.headerScratch);
    this.headerScratch = grown;
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
