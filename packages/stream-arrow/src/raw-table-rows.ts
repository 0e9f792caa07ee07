import {
  encodeHeaders,
  readHeaders,
  type OffsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import {
  Binary,
  Field,
  Int32,
  Int64,
  RecordBatch,
  Schema,
  Struct,
  Utf8,
  makeBuilder,
  makeData,
  type Data,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { ArrowBatchError } from './errors.js';
import { OffsetRuns } from './offset-runs.js';
import { sourceBatchProblem } from './source-batch-check.js';

/**
 * Raw held as rows of a table (a lakehouse raw: Zerobus writes Delta, and
 * recovery reads it back through Iceberg), one row per record:
 *
 * | column         | type   | null | holds                                          |
 * |----------------|--------|------|------------------------------------------------|
 * | `topic`        | utf8   | no   | source topic                                   |
 * | `partition`    | int32  | no   | source partition                               |
 * | `offset`       | int64  | yes  | source offset; null on a span marker           |
 * | `timestamp_ms` | int64  | no   | source timestamp, ms since the epoch           |
 * | `key`          | binary | yes  | record key; null when the source had none      |
 * | `value`        | binary | no   | payload as delivered (empty for a tombstone)   |
 * | `headers`      | binary | no   | headers and tombstone mark (headers-codec.ts)  |
 * | `span_start`   | int64  | no   | first offset of the batch the record came in   |
 * | `span_end`     | int64  | no   | end (exclusive) of that batch's span           |
 * | `span_records` | int32  | no   | how many records that batch held               |
 *
 * A table has no batches, only rows, and a table format may commit one
 * batch's rows in two commits: the span columns let a reader tell which
 * batches it sees whole. A batch counts as held once rows with
 * `span_records` distinct offsets of the same span are visible; until then
 * it is not held, however many of its rows are (a reader that claimed it
 * would claim records it never saw). A batch of no records (its offsets all
 * compacted away) is one marker row with a null offset.
 */
export const RAW_TABLE_COLUMNS = Object.freeze({
  topic: 'topic',
  partition: 'partition',
  offset: 'offset',
  timestamp: 'timestamp_ms',
  key: 'key',
  value: 'value',
  headers: 'headers',
  spanStart: 'span_start',
  spanEnd: 'span_end',
  spanRecords: 'span_records',
});

const C = RAW_TABLE_COLUMNS;

export const RAW_TABLE_FIELDS: readonly Field[] = Object.freeze([
  new Field(C.topic, new Utf8(), false),
  new Field(C.partition, new Int32(), false),
  new Field(C.offset, new Int64(), true),
  new Field(C.timestamp, new Int64(), false),
  new Field(C.key, new Binary(), true),
  new Field(C.value, new Binary(), false),
  new Field(C.headers, new Binary(), false),
  new Field(C.spanStart, new Int64(), false),
  new Field(C.spanEnd, new Int64(), false),
  new Field(C.spanRecords, new Int32(), false),
]);

/** The columns a reader needs to tell which batches are whole (`RawSpanTally`). */
export const RAW_TABLE_SPAN_COLUMNS: readonly string[] = Object.freeze([
  C.topic,
  C.partition,
  C.offset,
  C.spanStart,
  C.spanEnd,
  C.spanRecords,
]);

export function rawTableSchema(): Schema {
  return new Schema([...RAW_TABLE_FIELDS]);
}

const EMPTY = new Uint8Array(0);

/**
 * One source batch as raw table rows. The batch is checked first (as every
 * raw checks it): a bad record fails the whole batch (TWG_ARROW_VALUE_INVALID,
 * `poison`), its field and offset named, and no row is built.
 */
export function rawTableBatch(batch: SourceBatch): RecordBatch {
  const problem = sourceBatchProblem(batch);
  if (problem !== null)
    throw new ArrowBatchError('TWG_ARROW_VALUE_INVALID', problem.reason, {
      field: problem.field,
      ...(problem.offset === undefined ? {} : { offset: problem.offset }),
    });
  const { span, records } = batch;
  const rows = Math.max(1, records.length);
  const column = (type: DataType, fill: (push: (v: unknown) => void) => void) => {
    const builder = makeBuilder({ type, nullValues: [null] });
    fill((v) => builder.append(v));
    return builder.finish().toVector();
  };
  const each =
    (pick: (r: SourceRecord) => unknown, marker: unknown) => (push: (v: unknown) => void) => {
      if (records.length === 0) push(marker);
      for (const r of records) push(pick(r));
    };
  const same = (v: unknown) => (push: (v: unknown) => void) => {
    for (let i = 0; i < rows; i++) push(v);
  };
  const vectors: Record<string, Vector> = {
    [C.topic]: column(new Utf8(), same(span.topic)),
    [C.partition]: column(new Int32(), same(span.partition)),
    [C.offset]: column(
      new Int64(),
      each((r) => BigInt(r.offset), null),
    ),
    [C.timestamp]: column(
      new Int64(),
      each((r) => BigInt(r.timestamp), 0n),
    ),
    [C.key]: column(
      new Binary(),
      each((r) => r.key, null),
    ),
    [C.value]: column(
      new Binary(),
      each((r) => r.value, EMPTY),
    ),
    [C.headers]: column(
      new Binary(),
      each((r) => encodeHeaders(r.headers, r.tombstone === true), EMPTY),
    ),
    [C.spanStart]: column(new Int64(), same(BigInt(span.start))),
    [C.spanEnd]: column(new Int64(), same(BigInt(span.end))),
    [C.spanRecords]: column(new Int32(), same(records.length)),
  };
  const schema = rawTableSchema();
  const children = schema.fields.map((f): Data => {
    const data: Data | undefined = vectors[f.name]?.data[0];
    if (data === undefined) throw new Error(`raw table column ${f.name} was not built`);
    return data;
  });
  const struct = makeData({
    type: new Struct(schema.fields),
    length: rows,
    nullCount: 0,
    children,
  });
  return new RecordBatch(schema, struct);
}

/** One source batch as the raw table rows name it. */
export interface RawTableSpan extends OffsetSpan {
  readonly records: number;
}

const spanKey = (topic: string, partition: number, start: number, end: number, records: number) =>
  `${partition}\u0000${start}\u0000${end}\u0000${records}\u0000${topic}`;

/** A column read as numbers (int32, or int64 within 2^53), naming where a value is not one. */
function numberAt(v: Vector | null, row: number, name: string, where: string): number | null {
  const x: unknown = v?.get(row);
  if (x === null || x === undefined) return null;
  const n = typeof x === 'bigint' ? Number(x) : typeof x === 'number' ? x : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 0)
    throw rowError(
      where,
      row,
      `${name} is ${typeof x === 'bigint' || typeof x === 'number' ? String(x) : typeof x}, not an offset-like integer`,
    );
  return n;
}

function rowError(where: string, row: number, reason: string): ArrowBatchError {
  return new ArrowBatchError('TWG_ARROW_VALUE_INVALID', `${where} row ${row}: ${reason}`, {
    field: where,
    row,
  });
}

function columnOf(batch: RecordBatch, name: string, where: string): Vector {
  const v = batch.getChild(name);
  if (v === null)
    throw new ArrowBatchError('TWG_ARROW_SCHEMA_MISMATCH', `${where}: no column ${name}`, {
      field: name,
    });
  return v;
}

/** The span columns of one row, checked: the offset lies in the span, the count fits it. */
function rowSpan(
  cols: readonly Vector[],
  row: number,
  where: string,
): { readonly span: RawTableSpan; readonly offset: number | null } {
  const [topicV, partitionV, offsetV, startV, endV, recordsV] = cols as [
    Vector,
    Vector,
    Vector,
    Vector,
    Vector,
    Vector,
  ];
  const topic: unknown = topicV.get(row);
  if (typeof topic !== 'string') throw rowError(where, row, `${C.topic} is not a string`);
  const partition = numberAt(partitionV, row, C.partition, where);
  const start = numberAt(startV, row, C.spanStart, where);
  const end = numberAt(endV, row, C.spanEnd, where);
  const records = numberAt(recordsV, row, C.spanRecords, where);
  if (partition === null || start === null || end === null || records === null)
    throw rowError(where, row, 'a span column is null');
  if (end < start || records > end - start)
    throw rowError(where, row, `span [${start}, ${end}) cannot hold ${records} records`);
  const offset = numberAt(offsetV, row, C.offset, where);
  if (offset === null ? records !== 0 : offset < start || offset >= end)
    throw rowError(
      where,
      row,
      offset === null
        ? `${C.offset} is null in a span of ${records} records (only a marker of an empty span has none)`
        : `${C.offset} ${offset} lies outside its span [${start}, ${end})`,
    );
  return { span: { topic, partition, start, end, records }, offset };
}

function spanColumns(batch: RecordBatch, where: string): Vector[] {
  return [C.topic, C.partition, C.offset, C.spanStart, C.spanEnd, C.spanRecords].map((n) =>
    columnOf(batch, n, where),
  );
}

interface Tallied {
  readonly span: RawTableSpan;
  readonly offsets: OffsetRuns;
  /** A marker row of a span of no records was seen. */
  marker: boolean;
}

/**
 * Which batches the rows seen so far hold whole: per batch (its span and
 * record count), the distinct offsets seen. Rows may come in any order, in
 * any number of files, and twice (a write retried): only distinct offsets
 * count.
 */
export class RawSpanTally {
  private readonly spans = new Map<string, Tallied>();

  /** Tallies every row of `batch` (it needs `RAW_TABLE_SPAN_COLUMNS`); `where` names it in errors. */
  add(batch: RecordBatch, where: string): void {
    const cols = spanColumns(batch, where);
    for (let row = 0; row < batch.numRows; row++) {
      const { span, offset } = rowSpan(cols, row, where);
      const t = this.tallied(span);
      if (offset === null) t.marker = true;
      else t.offsets.add(offset);
    }
  }

  /** Adds what another tally saw (another file's rows). */
  merge(other: RawSpanTally): void {
    for (const t of other.spans.values()) {
      const mine = this.tallied(t.span);
      mine.offsets.addAll(t.offsets);
      mine.marker ||= t.marker;
    }
  }

  /** The batches seen whole, by partition then start. */
  complete(): RawTableSpan[] {
    return this.list((t) => seenAll(t));
  }

  /** The batches of which some rows, not all, are visible. */
  partial(): RawTableSpan[] {
    return this.list((t) => !seenAll(t));
  }

  private list(keep: (t: Tallied) => boolean): RawTableSpan[] {
    return [...this.spans.values()]
      .filter(keep)
      .map((t) => t.span)
      .sort(
        (a, b) =>
          a.topic.localeCompare(b.topic) ||
          a.partition - b.partition ||
          a.start - b.start ||
          a.end - b.end,
      );
  }

  private tallied(span: RawTableSpan): Tallied {
    const key = spanKey(span.topic, span.partition, span.start, span.end, span.records);
    let t = this.spans.get(key);
    if (t === undefined) {
      t = { span, offsets: new OffsetRuns(), marker: false };
      this.spans.set(key, t);
    }
    return t;
  }
}

const seenAll = (t: Tallied): boolean =>
  t.span.records === 0 ? t.marker : t.offsets.count === t.span.records;

/**
 * The source batches whole in `batches` (raw table rows, any order, maybe
 * twice) that `wanted` accepts, in span order, each record once and in
 * offset order, as the source delivered them. Batches seen in part are left
 * out: their rows are not all visible yet.
 */
export function rawBatchesOf(
  batches: readonly RecordBatch[],
  where: string,
  wanted: (span: RawTableSpan) => boolean,
): SourceBatch[] {
  const tally = new RawSpanTally();
  for (const b of batches) tally.add(b, where);
  const whole = new Map<string, Map<number, SourceRecord>>();
  for (const s of tally.complete()) {
    if (wanted(s)) whole.set(spanKey(s.topic, s.partition, s.start, s.end, s.records), new Map());
  }
  for (const b of batches) {
    const cols = spanColumns(b, where);
    const [timestampV, keyV, valueV, headersV] = [C.timestamp, C.key, C.value, C.headers].map((n) =>
      columnOf(b, n, where),
    ) as [Vector, Vector, Vector, Vector];
    for (let row = 0; row < b.numRows; row++) {
      const { span, offset } = rowSpan(cols, row, where);
      const records = whole.get(
        spanKey(span.topic, span.partition, span.start, span.end, span.records),
      );
      if (records === undefined || offset === null || records.has(offset)) continue;
      records.set(offset, recordAt(row, offset, [timestampV, keyV, valueV, headersV], where));
    }
  }
  return tally
    .complete()
    .filter((s) => whole.has(spanKey(s.topic, s.partition, s.start, s.end, s.records)))
    .map((s) => {
      const records = whole.get(spanKey(s.topic, s.partition, s.start, s.end, s.records));
      return {
        span: { topic: s.topic, partition: s.partition, start: s.start, end: s.end },
        records: [...(records?.values() ?? [])].sort((a, b) => a.offset - b.offset),
      };
    });
}

function recordAt(
  row: number,
  offset: number,
  [timestampV, keyV, valueV, headersV]: readonly [Vector, Vector, Vector, Vector],
  where: string,
): SourceRecord {
  const timestamp = numberAt(timestampV, row, C.timestamp, where);
  const value: unknown = valueV.get(row);
  const key: unknown = keyV.get(row);
  const headerBytes: unknown = headersV.get(row);
  if (timestamp === null) throw rowError(where, row, `${C.timestamp} is null`);
  if (!(value instanceof Uint8Array)) throw rowError(where, row, `${C.value} is not binary`);
  if (key !== null && !(key instanceof Uint8Array))
    throw rowError(where, row, `${C.key} is not binary`);
  if (!(headerBytes instanceof Uint8Array))
    throw rowError(where, row, `${C.headers} is not binary`);
  let decoded;
  try {
    decoded = readHeaders(headerBytes);
  } catch (e) {
    throw rowError(where, row, `${C.headers}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return {
    offset,
    key,
    value,
    timestamp,
    headers: decoded.headers,
    ...(decoded.tombstone ? { tombstone: true as const } : {}),
  };
}
