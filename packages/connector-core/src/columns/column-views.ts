import { NO_HEADERS } from '../source-headers.js';
import type { SourceRecord } from '../source.js';
import type { OffsetSpan } from '../offset-span.js';
import type { PackedRecords } from '../off-thread/packed-values.js';
import { NULL_LENGTH, readHeaders } from './headers-codec.js';
import {
  columnsLayout,
  readInt64,
  type ColumnsLayout,
  type RecordColumns,
} from './record-columns.js';

/**
 * What a `ColumnarBatch` does over its columns, as functions of the views
 * and the rows `[from, to)` it holds (columnar-batch.ts keeps the state).
 */

/** Typed views of one set of record columns, made once and shared by its slices. */
export interface ColumnViews {
  readonly columns: RecordColumns;
  readonly layout: ColumnsLayout;
  /** Offsets, then timestamps: int64 as int32 pairs. */
  readonly ints: Int32Array;
  readonly keyOffsets: Int32Array;
  readonly valueOffsets: Int32Array;
  readonly headerOffsets: Int32Array;
  readonly validity: Uint8Array;
  readonly bytes: Uint8Array;
}

/**
 * The first row whose offset is not a safe integer inside the span above
 * the previous one, or whose timestamp is not a safe integer, or null
 * (columns-check.ts). Integer compares over the typed arrays, no method call per row.
 */
export function rowsProblemOf(
  v: ColumnViews,
  from: number,
  to: number,
  span: OffsetSpan,
): { readonly field: string; readonly offset: number; readonly reason: string } | null {
  const ints = v.ints;
  const count = v.columns.count;
  const { start, end } = span;
  let previous = -1;
  for (let r = from; r < to; r++) {
    const offset = readInt64(ints, r);
    if (!(offset >= start && offset < end && offset > previous) || !Number.isSafeInteger(offset)) {
      const i = r - from;
      return {
        field: 'offset',
        offset: Number.isSafeInteger(offset) ? offset : i,
        reason:
          `row ${i}: offset ${offset} is not a safe integer inside the span ` +
          `[${start}, ${end}) above the previous one (${previous})`,
      };
    }
    previous = offset;
    const timestamp = readInt64(ints, count + r);
    if (!Number.isSafeInteger(timestamp)) {
      return {
        field: 'timestamp',
        offset,
        reason: `timestamp ${timestamp} is not a safe integer`,
      };
    }
  }
  return null;
}

/**
 * The first binary column whose offsets go back or leave its region, by
 * row of this batch, or null (columns-check.ts).
 */
export function regionsProblemOf(
  v: ColumnViews,
  from: number,
  to: number,
): { readonly field: string; readonly row: number; readonly reason: string } | null {
  const { columns } = v;
  for (const [field, offsets, length] of [
    ['key', v.keyOffsets, columns.keyBytes],
    ['value', v.valueOffsets, columns.valueBytes],
    ['headers', v.headerOffsets, columns.headerBytes],
  ] as const) {
    for (let r = from; r < to; r++) {
      const start = offsets[r] ?? 0;
      const end = offsets[r + 1] ?? 0;
      if (start < 0 || end < start || end > length) {
        return {
          field,
          row: r - from,
          reason: `the ${field} column's offsets [${start}, ${end}) of row ${r - from} leave its ${length} bytes`,
        };
      }
    }
  }
  return null;
}

/**
 * Writes this batch's rows as record columns into `target` (laid out by
 * `columnsLayout` for them; raw's pool gives a buffer at least that long):
 * whole regions copied, the binary offsets rebased to the slice. Returns
 * how many keys are null.
 */
export function writeColumnsOf(
  v: ColumnViews,
  from: number,
  to: number,
  target: ArrayBuffer,
  at: ColumnsLayout,
): number {
  const n = to - from;
  const out = new Uint8Array(target);
  // Offsets and timestamps: two int64 runs.
  out.set(v.bytes.subarray(8 * from, 8 * to), at.offsets);
  const ts = v.layout.timestamps;
  out.set(v.bytes.subarray(ts + 8 * from, ts + 8 * to), at.timestamps);
  rebase(v.keyOffsets, from, to, new Int32Array(target, at.keyOffsets, n + 1));
  rebase(v.valueOffsets, from, to, new Int32Array(target, at.valueOffsets, n + 1));
  rebase(v.headerOffsets, from, to, new Int32Array(target, at.headerOffsets, n + 1));
  copyRegion(v.bytes, v.layout.keys, v.keyOffsets, from, to, out, at.keys);
  copyRegion(v.bytes, v.layout.values, v.valueOffsets, from, to, out, at.values);
  copyRegion(v.bytes, v.layout.headers, v.headerOffsets, from, to, out, at.headers);
  let nullKeys = 0;
  if (v.columns.nullKeys > 0) {
    const validity = new Uint8Array(target, at.validity, at.validityBytes);
    validity.fill(0);
    for (let i = 0; i < n; i++) {
      const r = from + i;
      if ((((v.validity[r >> 3] ?? 0) >> (r & 7)) & 1) === 1) {
        validity[i >> 3] = (validity[i >> 3] ?? 0) | (1 << (i & 7));
      } else {
        nullKeys++;
      }
    }
  }
  return nullKeys;
}

/**
 * The rows packed for another thread (off-thread/packed-values.ts): the
 * values region copied once into a buffer of its own (it is transferred
 * away), the ends rebased, the tombstones read off the header marks, with
 * no record made.
 */
export function packedOf(v: ColumnViews, from: number, to: number): PackedRecords {
  const n = to - from;
  const base = v.valueOffsets[from] ?? 0;
  const bytes = new Uint8Array(regionLength(v.valueOffsets, from, to));
  bytes.set(v.bytes.subarray(v.layout.values + base, v.layout.values + (v.valueOffsets[to] ?? 0)));
  const ends = new Uint32Array(n);
  const tombstones = new Uint8Array(n);
  const offsets = new Float64Array(n);
  const timestamps = new Float64Array(n);
  const count = v.columns.count;
  const ints = v.ints;
  const valueOffsets = v.valueOffsets;
  for (let i = 0; i < n; i++) {
    const r = from + i;
    ends[i] = (valueOffsets[r + 1] ?? 0) - base;
    offsets[i] = readInt64(ints, r);
    timestamps[i] = readInt64(ints, count + r);
  }
  // Only a record with headers can be a tombstone (its mark leads them).
  if (regionLength(v.headerOffsets, from, to) > 0) {
    const { headerOffsets, bytes: all } = v;
    const at = v.layout.headers;
    for (let i = 0; i < n; i++) {
      const h = headerOffsets[from + i] ?? 0;
      const p = at + h;
      if (
        (headerOffsets[from + i + 1] ?? 0) - h >= 4 &&
        all[p] === 0xff &&
        all[p + 1] === 0xff &&
        all[p + 2] === 0xff &&
        all[p + 3] === 0xff
      ) {
        tombstones[i] = 1;
      }
    }
  }
  return { bytes, ends, tombstones, offsets, timestamps };
}

/** `headerPayload` of rows `[from, to)` of the columns. */
export function headerPayloadOf(v: ColumnViews, from: number, to: number): number {
  const { bytes, layout, headerOffsets } = v;
  const view = new DataView(bytes.buffer, bytes.byteOffset + layout.headers);
  let payload = 0;
  for (let r = from; r < to; r++) {
    let pos = headerOffsets[r] ?? 0;
    const end = headerOffsets[r + 1] ?? 0;
    if (pos < end && view.getUint32(pos) === NULL_LENGTH) pos += 4;
    while (pos < end) {
      const name = view.getUint32(pos);
      pos += 4 + name;
      const value = view.getUint32(pos);
      pos += 4;
      const length = value === NULL_LENGTH ? 0 : value;
      pos += length;
      payload += name + length;
    }
  }
  return payload;
}

export function recordOf(v: ColumnViews, r: number): SourceRecord {
  const n = v.columns.count;
  const buffer = v.columns.buffer;
  const keyNull = v.columns.nullKeys > 0 && (((v.validity[r >> 3] ?? 0) >> (r & 7)) & 1) === 0;
  const k0 = v.keyOffsets[r] ?? 0;
  const v0 = v.valueOffsets[r] ?? 0;
  const h0 = v.headerOffsets[r] ?? 0;
  const h1 = v.headerOffsets[r + 1] ?? 0;
  // A Buffer view, so header values come back as Buffers, as keys and values do.
  const decoded =
    h0 === h1 ? null : readHeaders(Buffer.from(buffer, v.layout.headers + h0, h1 - h0));
  const record = {
    offset: readInt64(v.ints, r),
    key: keyNull ? null : Buffer.from(buffer, v.layout.keys + k0, (v.keyOffsets[r + 1] ?? 0) - k0),
    value: Buffer.from(buffer, v.layout.values + v0, (v.valueOffsets[r + 1] ?? 0) - v0),
    timestamp: readInt64(v.ints, n + r),
    headers: decoded === null || decoded.headers.length === 0 ? NO_HEADERS : decoded.headers,
  };
  return decoded?.tombstone === true ? { ...record, tombstone: true } : record;
}

export function viewsOf(columns: RecordColumns): ColumnViews {
  const { count: n, buffer } = columns;
  const layout = columnsLayout(n, columns.keyBytes, columns.valueBytes, columns.headerBytes);
  return {
    columns,
    layout,
    ints: new Int32Array(buffer, 0, 4 * n),
    keyOffsets: new Int32Array(buffer, layout.keyOffsets, n + 1),
    valueOffsets: new Int32Array(buffer, layout.valueOffsets, n + 1),
    headerOffsets: new Int32Array(buffer, layout.headerOffsets, n + 1),
    validity: new Uint8Array(buffer, layout.validity, layout.validityBytes),
    bytes: new Uint8Array(buffer, 0, layout.total),
  };
}

export function regionLength(offsets: Int32Array, from: number, to: number): number {
  return (offsets[to] ?? 0) - (offsets[from] ?? 0);
}

/** Offsets `[from, to]` less the first, into `out`. */
function rebase(offsets: Int32Array, from: number, to: number, out: Int32Array): void {
  const base = offsets[from] ?? 0;
  if (base === 0) {
    out.set(offsets.subarray(from, to + 1));
    return;
  }
  for (let i = from; i <= to; i++) out[i - from] = (offsets[i] ?? 0) - base;
}

function copyRegion(
  bytes: Uint8Array,
  region: number,
  offsets: Int32Array,
  from: number,
  to: number,
  out: Uint8Array,
  at: number,
): void {
  const start = offsets[from] ?? 0;
  const end = offsets[to] ?? 0;
  if (end > start) out.set(bytes.subarray(region + start, region + end), at);
}
