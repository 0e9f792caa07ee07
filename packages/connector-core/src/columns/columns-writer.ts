import { InvalidInputError } from '../errors.js';
import type { OffsetSpan } from '../offset-span.js';
import type { SourceBatch } from '../source.js';
import { ColumnarBatch } from './columnar-batch.js';
import { HEADERS_UNENCODABLE, HeaderEncoder, MAX_COLUMN_BYTES } from './header-encoder.js';
import { columnsIn, columnsLayout, writeInt64, type ColumnsLayout } from './record-columns.js';

/** The sizes of a batch to write, summed by the source in a first pass over what it decoded. */
export interface ColumnSizes {
  readonly count: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
  /** Encoded header bytes: the sum of `headerBytes` over the records. */
  readonly headerBytes: number;
}

/** What the writer is filling: the buffer, its views, and how far each region got. */
interface Filling {
  readonly sizes: ColumnSizes;
  readonly at: ColumnsLayout;
  readonly buffer: ArrayBuffer;
  readonly bytes: Uint8Array;
  readonly ints: Int32Array;
  readonly keyOffsets: Int32Array;
  readonly valueOffsets: Int32Array;
  readonly headerOffsets: Int32Array;
  readonly validity: Uint8Array;
  row: number;
  keys: number;
  values: number;
  nullKeys: number;
  first: number;
  previous: number;
}

/**
 * Writes a source's records straight into record columns (record-columns.ts)
 * and hands them over as one `ColumnarBatch`: no object per record, each key
 * and value copied once, headers encoded as raw stores them. A source sums
 * the sizes first (`headerBytes` for each record's headers), calls `begin`,
 * `append`s every record, then `finish`es. One writer per source, reused
 * batch after batch (it caches encoded header names); not re-entrant.
 *
 * Every record is checked as it is appended; a refusal names the field and
 * the offset and leaves the writer ready for the next `begin`.
 */
export class ColumnsWriter {
  private readonly headers = new HeaderEncoder();
  private filling: Filling | null = null;

  /**
   * Encoded bytes of one record's headers and tombstone mark, for the sizes:
   * called in the first pass, before `begin` (the sizes are what `begin`
   * is told). Nothing is encoded here. Headers the codec cannot encode
   * count 0 here; `append` refuses them, naming the offset.
   */
  headerBytes(headers: readonly unknown[], tombstone: boolean): number {
    if (this.filling !== null) {
      refuse('batch', undefined, 'headerBytes while a batch is written: sum the sizes first');
    }
    if (headers.length === 0 && !tombstone) return 0;
    const size = this.headers.size(headers, tombstone);
    return size < 0 ? 0 : size;
  }

  begin(sizes: ColumnSizes): void {
    const { count, keyBytes, valueBytes, headerBytes } = sizes;
    for (const [field, n] of Object.entries(sizes)) {
      if (!Number.isSafeInteger(n) || n < 0) refuse(field, undefined, `must be a count, not ${n}`);
    }
    for (const [field, n] of [
      ['key', keyBytes],
      ['value', valueBytes],
      ['headers', headerBytes],
    ] as const) {
      if (n > MAX_COLUMN_BYTES) {
        refuse(
          field,
          undefined,
          `the batch's ${field} column would exceed ${MAX_COLUMN_BYTES} bytes (i32 offsets); deliver smaller batches`,
        );
      }
    }
    const at = columnsLayout(count, keyBytes, valueBytes, headerBytes);
    // Not zeroed (a fresh zeroed buffer per batch measured as much as all
    // the appends): every byte the layout reads is written, the first
    // offsets and the validity bitmap here, the rest by the appends, and
    // `finish` refuses a batch whose regions are not filled to their sizes.
    // The padding between regions is never read.
    const buffer = Buffer.allocUnsafeSlow(at.total).buffer;
    this.headers.reset();
    this.filling = {
      sizes,
      at,
      buffer,
      bytes: new Uint8Array(buffer),
      ints: new Int32Array(buffer, 0, 4 * count),
      keyOffsets: new Int32Array(buffer, at.keyOffsets, count + 1),
      valueOffsets: new Int32Array(buffer, at.valueOffsets, count + 1),
      headerOffsets: new Int32Array(buffer, at.headerOffsets, count + 1),
      validity: new Uint8Array(buffer, at.validity, at.validityBytes),
      row: 0,
      keys: 0,
      values: 0,
      nullKeys: 0,
      first: -1,
      previous: -1,
    };
    const f = this.filling;
    f.keyOffsets[0] = 0;
    f.valueOffsets[0] = 0;
    f.headerOffsets[0] = 0;
    f.validity.fill(0);
  }

  /**
   * Appends one record. `value` null is a tombstone (stored empty, marked in
   * its headers). Offsets must be safe integers, strictly increasing;
   * timestamps safe integers (ms since the epoch).
   */
  append(
    offset: number,
    timestamp: number,
    key: Uint8Array | null,
    value: Uint8Array | null,
    headers: readonly unknown[],
  ): void {
    const f = this.row(offset, timestamp, headers);
    if (key !== null && !(key instanceof Uint8Array)) this.fail('key', offset, 'not a Uint8Array');
    if (value !== null && !(value instanceof Uint8Array)) {
      this.fail('value', offset, 'not a Uint8Array');
    }
    const i = f.row;
    if (key === null) {
      f.nullKeys++;
    } else {
      this.room(f.keys + key.byteLength > f.sizes.keyBytes, 'key', offset);
      f.bytes.set(key, f.at.keys + f.keys);
      f.keys += key.byteLength;
      f.validity[i >> 3] = (f.validity[i >> 3] ?? 0) | (1 << (i & 7));
    }
    f.keyOffsets[i + 1] = f.keys;
    if (value !== null) {
      this.room(f.values + value.byteLength > f.sizes.valueBytes, 'value', offset);
      f.bytes.set(value, f.at.values + f.values);
      f.values += value.byteLength;
    }
    f.valueOffsets[i + 1] = f.values;
    this.endRow(f, offset, headers, value === null);
  }

  /**
   * `append` of a record whose key and value lie in `source`, as a decoder
   * that indexes a fetch response finds them: each is copied from there,
   * with no view made per record. A length of -1 is null (no key; a
   * tombstone's value). A region outside `source` is refused.
   */
  appendFrom(
    offset: number,
    timestamp: number,
    source: Buffer,
    keyStart: number,
    keyLength: number,
    valueStart: number,
    valueLength: number,
    headers: readonly unknown[],
  ): void {
    const f = this.row(offset, timestamp, headers);
    if (outside(source, keyStart, keyLength)) this.fail('key', offset, 'region outside its source');
    if (outside(source, valueStart, valueLength)) {
      this.fail('value', offset, 'region outside its source');
    }
    const i = f.row;
    if (keyLength < 0) {
      f.nullKeys++;
    } else {
      this.room(f.keys + keyLength > f.sizes.keyBytes, 'key', offset);
      source.copy(f.bytes, f.at.keys + f.keys, keyStart, keyStart + keyLength);
      f.keys += keyLength;
      f.validity[i >> 3] = (f.validity[i >> 3] ?? 0) | (1 << (i & 7));
    }
    f.keyOffsets[i + 1] = f.keys;
    if (valueLength >= 0) {
      this.room(f.values + valueLength > f.sizes.valueBytes, 'value', offset);
      source.copy(f.bytes, f.at.values + f.values, valueStart, valueStart + valueLength);
      f.values += valueLength;
    }
    f.valueOffsets[i + 1] = f.values;
    this.endRow(f, offset, headers, valueLength < 0);
  }

  /** A record's row opened: checks, offset and timestamp written. */
  private row(offset: number, timestamp: number, headers: readonly unknown[]): Filling {
    const f = this.filling ?? refuse('batch', offset, 'append before begin');
    const i = f.row;
    if (i >= f.sizes.count)
      this.fail('batch', offset, `more records than the ${f.sizes.count} declared`);
    if (!Number.isSafeInteger(offset) || offset < 0 || offset <= f.previous) {
      this.fail('offset', offset, `must be a safe integer above the previous one (${f.previous})`);
    }
    if (!Number.isSafeInteger(timestamp))
      this.fail('timestamp', offset, `${timestamp} is not a safe integer`);
    if (!Array.isArray(headers))
      this.fail('headers', offset, 'not an array of [name, value] pairs');
    if (i === 0) f.first = offset;
    f.previous = offset;
    writeInt64(f.ints, i, offset);
    writeInt64(f.ints, f.sizes.count + i, timestamp);
    return f;
  }

  private room(over: boolean, field: 'key' | 'value', offset: number): void {
    if (over) this.fail(field, offset, `${field}s exceed the declared bytes`);
  }

  /** The row's headers (and tombstone mark) encoded, and the row closed. */
  private endRow(
    f: Filling,
    offset: number,
    headers: readonly unknown[],
    tombstone: boolean,
  ): void {
    const i = f.row;
    const end =
      headers.length === 0 && !tombstone
        ? (f.headerOffsets[i] ?? 0)
        : this.headers.write(headers, tombstone);
    if (end === HEADERS_UNENCODABLE) {
      this.fail(
        'headers',
        offset,
        'must be [name, value] pairs: a string name UTF-8 can encode, a Uint8Array or null value',
      );
    }
    if (end < 0 || end > f.sizes.headerBytes)
      this.fail('headers', offset, 'headers exceed the declared bytes');
    f.headerOffsets[i + 1] = end;
    f.row = i + 1;
  }

  /** Drops the batch being written, if any: after a caller's own refusal mid-batch. */
  abandon(): void {
    this.filling = null;
  }

  /** The batch of what was appended, under `span` (which must cover every offset). */
  finish(span: OffsetSpan): ColumnarBatch {
    const f = this.filling ?? refuse('batch', undefined, 'finish before begin');
    this.filling = null;
    const { count, keyBytes, valueBytes, headerBytes } = f.sizes;
    const headers = f.headerOffsets[f.row] ?? 0;
    if (
      f.row !== count ||
      f.keys !== keyBytes ||
      f.values !== valueBytes ||
      headers !== headerBytes
    ) {
      refuse(
        'batch',
        undefined,
        `declared ${count} records of ${keyBytes}/${valueBytes}/${headerBytes} key/value/header bytes, ` +
          `appended ${f.row} of ${f.keys}/${f.values}/${headers}`,
      );
    }
    if (count > 0 && !covers(span, f)) {
      refuse(
        'span',
        undefined,
        `${span.topic}/${span.partition} [${span.start}, ${span.end}) does not cover the records`,
      );
    }
    f.bytes.set(this.headers.written(), f.at.headers);
    return ColumnarBatch.over(span, columnsIn(f.at, f.nullKeys, f.buffer));
  }

  /** A batch of record objects written as columns (tests, benches, a source holding objects anyway). */
  write(batch: SourceBatch): ColumnarBatch {
    const { records } = batch;
    let keyBytes = 0;
    let valueBytes = 0;
    let headerBytes = 0;
    for (const r of records) {
      keyBytes += r.key?.byteLength ?? 0;
      valueBytes += r.value.byteLength;
      headerBytes += this.headerBytes(r.headers, r.tombstone === true);
    }
    this.begin({ count: records.length, keyBytes, valueBytes, headerBytes });
    for (const r of records) {
      const tombstone = r.tombstone === true;
      if (tombstone && r.value.byteLength > 0) {
        // A tombstone is stored empty: a value beside the mark would be lost.
        this.filling = null;
        refuse('tombstone', r.offset, 'a tombstone must have an empty value');
      }
      this.append(r.offset, r.timestamp, r.key, tombstone ? null : r.value, r.headers);
    }
    return this.finish(batch.span);
  }

  private fail(field: string, offset: number, reason: string): never {
    this.filling = null;
    return refuse(field, offset, reason);
  }
}

/** A region of `length` bytes at `start` (-1: none) not wholly inside `source`. */
function outside(source: Uint8Array, start: number, length: number): boolean {
  return !(length >= -1 && start >= 0 && start + Math.max(0, length) <= source.length);
}

function covers(span: OffsetSpan, f: Filling): boolean {
  return f.first >= span.start && f.previous < span.end;
}

function refuse(field: string, offset: number | undefined, reason: string): never {
  throw new InvalidInputError(
    'TWG_RECORD_INVALID',
    field,
    offset === undefined ? reason : `${reason} (offset ${offset})`,
  );
}
