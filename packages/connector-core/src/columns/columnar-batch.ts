import type { OffsetSpan } from '../offset-span.js';
import type { PackedRecords } from '../off-thread/packed-values.js';
import type { SourceBatch, SourceRecord } from '../source.js';
import {
  headerPayloadOf,
  packedOf,
  recordOf,
  regionLength,
  regionsProblemOf,
  rowsProblemOf,
  viewsOf,
  writeColumnsOf,
  type ColumnViews,
} from './column-views.js';
import {
  columnsIn,
  columnsLayout,
  readInt64,
  type ColumnsLayout,
  type RecordColumns,
} from './record-columns.js';

/**
 * A source batch held as columns (record-columns.ts) rather than an object
 * per record: what a source that decodes into buffers hands over, so that
 * raw copies its regions whole (sink-files batch-packer.ts) and the ingest
 * loop counts, sizes and cuts it without touching a record. `records` is
 * made on first read, for whoever needs objects (a secondary's derivation,
 * dedup), and kept; its keys and values are views into the columns.
 *
 * Only a `ColumnsWriter` makes one (it checks every record as it writes),
 * and `slice` cuts one, so the offsets are safe integers, strictly
 * increasing, inside the span.
 */
export class ColumnarBatch implements SourceBatch {
  // ES private fields: a batch's own enumerable properties are `span` and
  // `records`, as a plain batch's are, so `toEqual` and friends compare it
  // as one.
  readonly #views: ColumnViews;
  readonly #from: number;
  readonly #to: number;
  #made: readonly SourceRecord[] | null = null;
  #payload: number | null = null;
  /** Made on first read and kept (an own property, so it is seen as a plain batch's). */
  declare readonly records: readonly SourceRecord[];

  private constructor(
    readonly span: OffsetSpan,
    views: ColumnViews,
    from: number,
    to: number,
  ) {
    this.#views = views;
    this.#from = from;
    this.#to = to;
    Object.defineProperty(this, 'records', { enumerable: true, get: () => this.#records() });
  }

  /** @internal The batch of every row of `columns` (columns-writer.ts). */
  static over(span: OffsetSpan, columns: RecordColumns): ColumnarBatch {
    return new ColumnarBatch(span, viewsOf(columns), 0, columns.count);
  }

  /** The rows of the columns this batch holds: `[from, to)`. */
  get from(): number {
    return this.#from;
  }

  get to(): number {
    return this.#to;
  }

  get count(): number {
    return this.#to - this.#from;
  }

  /** The columns this batch reads (shared with its slices: rows `[from, to)` are its own). */
  get columns(): RecordColumns {
    return this.#views.columns;
  }

  #records(): readonly SourceRecord[] {
    if (this.#made === null) {
      const made: SourceRecord[] = new Array<SourceRecord>(this.count);
      for (let i = 0; i < made.length; i++) made[i] = recordOf(this.#views, this.#from + i);
      this.#made = made;
    }
    return this.#made;
  }

  /** The offset of row `i` of this batch (0-based). */
  offsetAt(i: number): number {
    return readInt64(this.#views.ints, this.#from + i);
  }

  /** The timestamp of row `i` of this batch (0-based), ms since the epoch. */
  timestampAt(i: number): number {
    return readInt64(this.#views.ints, this.#views.columns.count + this.#from + i);
  }

  /**
   * The first row whose offset is not a safe integer inside the span above
   * the previous one, or whose timestamp is not a safe integer, or null
   * (columns-check.ts). Integer compares over the typed arrays, no method call per row.
   */
  rowsProblem(): {
    readonly field: string;
    readonly offset: number;
    readonly reason: string;
  } | null {
    return rowsProblemOf(this.#views, this.#from, this.#to, this.span);
  }

  /**
   * The first binary column whose offsets go back or leave its region, by
   * row of this batch, or null (columns-check.ts).
   */
  regionsProblem(): {
    readonly field: string;
    readonly row: number;
    readonly reason: string;
  } | null {
    return regionsProblemOf(this.#views, this.#from, this.#to);
  }

  /**
   * Key, value and header name and value bytes of row `i` of this batch:
   * what the record's own sizes sum to, read off the columns.
   */
  rowBytes(i: number): number {
    const { keyOffsets, valueOffsets, headerOffsets } = this.#views;
    const r = this.#from + i;
    const keys = (keyOffsets[r + 1] ?? 0) - (keyOffsets[r] ?? 0);
    const values = (valueOffsets[r + 1] ?? 0) - (valueOffsets[r] ?? 0);
    const headers =
      headerOffsets[r] === headerOffsets[r + 1] ? 0 : headerPayloadOf(this.#views, r, r + 1);
    return keys + values + headers;
  }

  /**
   * Key, value and header name and value bytes of the whole batch: what the
   * records' own sizes sum to (`headerPayload`), kept once read.
   */
  payloadBytes(): number {
    this.#payload ??= this.keyBytes() + this.valueBytes() + this.headerPayload();
    return this.#payload;
  }

  keyBytes(): number {
    return regionLength(this.#views.keyOffsets, this.#from, this.#to);
  }

  valueBytes(): number {
    return regionLength(this.#views.valueOffsets, this.#from, this.#to);
  }

  headerBytes(): number {
    return regionLength(this.#views.headerOffsets, this.#from, this.#to);
  }

  /**
   * Rows `[from, to)` of this batch (0-based) under `span`, which the caller
   * has checked covers their offsets. No bytes are copied.
   */
  slice(from: number, to: number, span: OffsetSpan): ColumnarBatch {
    if (!(from >= 0 && from <= to && to <= this.count)) {
      throw new RangeError(`slice [${from}, ${to}) of a batch of ${this.count} rows`);
    }
    return new ColumnarBatch(span, this.#views, this.#from + from, this.#from + to);
  }

  /**
   * This batch again, over the same columns, with no records made: what a
   * holder keeps once the records a reader made of it are no longer needed
   * (a lane holding a batch until its sink settles, while the sink holds
   * the rows derived from those records). No bytes are copied; `records`
   * is made again if it is read.
   */
  columnsOnly(): ColumnarBatch {
    return new ColumnarBatch(this.span, this.#views, this.#from, this.#to);
  }

  /**
   * Writes this batch's rows as record columns into `target` (laid out by
   * `columnsLayout` for them; raw's pool gives a buffer at least that long):
   * whole regions copied, the binary offsets rebased to the slice. Returns
   * how many keys are null.
   */
  writeColumns(target: ArrayBuffer, at: ColumnsLayout): number {
    return writeColumnsOf(this.#views, this.#from, this.#to, target, at);
  }

  /**
   * The batch holding only its own bytes: itself when it spans all of its
   * columns, else its rows copied into columns of their own (whole regions,
   * no record made). A slice kept waiting would otherwise keep the whole
   * batch it was cut from alive.
   */
  detached(): ColumnarBatch {
    const { columns } = this.#views;
    if (this.#from === 0 && this.#to === columns.count) return this;
    const at = columnsLayout(this.count, this.keyBytes(), this.valueBytes(), this.headerBytes());
    const buffer = new ArrayBuffer(at.total);
    const nullKeys = this.writeColumns(buffer, at);
    return ColumnarBatch.over(this.span, columnsIn(at, nullKeys, buffer));
  }

  /**
   * The rows packed for another thread (off-thread/packed-values.ts): the
   * values region copied once into a buffer of its own (it is transferred
   * away), the ends rebased, the tombstones read off the header marks, with
   * no record made.
   */
  packed(): PackedRecords {
    return packedOf(this.#views, this.#from, this.#to);
  }

  /**
   * Header name and value bytes of the batch, as a receipt reports them
   * (the codec's lengths and tombstone marks left out).
   */
  headerPayload(): number {
    return headerPayloadOf(this.#views, this.#from, this.#to);
  }

  /** `headerPayload` of rows `[from, to)` of the columns. */
}
