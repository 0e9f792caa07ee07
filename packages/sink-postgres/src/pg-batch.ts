import {
  formatSpan,
  offsetSpan,
  RECORD_ID_BYTES,
  type Confirm,
  type OffsetSpan,
  type SinkId,
} from '@thalweg/connector-core';
import { PostgresSinkError } from './errors.js';

/** One row: its record id and its values in the table spec's column order. */
export interface PgRow {
  /** `_twg_record_id`, 16 bytes: the key every replay deduplicates on. */
  readonly recordId: Uint8Array;
  readonly values: readonly unknown[];
}

/**
 * What the sink is given per source span. Values are sent as pg sends
 * parameters (strings, numbers, bigints, booleans, Dates, byte arrays;
 * `null` and `undefined` are NULL), except `jsonb` columns, whose values
 * are JSON-serialised by the sink, so a JS array is a JSON array there.
 * The batch must not be changed after submit: it is read when written.
 */
export interface PgBatch {
  readonly rows: readonly PgRow[];
}

/**
 * The checks that can be made without the server, on the whole batch before
 * it is accepted, so a refused batch changes nothing. Value types are the
 * server's to judge (it names the column when it refuses one).
 */
export function checkSubmission(
  batch: PgBatch,
  span: OffsetSpan,
  confirm: Confirm<'secondary'>,
  sink: SinkId,
  width: number,
  table: string,
): void {
  const fail = (field: string, reason: string, cause?: unknown): never => {
    throw new PostgresSinkError(
      'TWG_PG_SINK_BATCH_INVALID',
      { table, ...(isSpanLike(span) ? { span } : {}) },
      `${field}: ${reason}; nothing was accepted`,
      cause,
    );
  };
  try {
    offsetSpan(span.topic, span.partition, span.start, span.end);
  } catch (e) {
    fail('span', e instanceof Error ? e.message : String(e), e);
  }
  // JavaScript callers bypass the types: look at the batch as unknown data.
  const given: unknown = batch;
  const rows: unknown =
    typeof given === 'object' && given !== null ? (given as { rows?: unknown }).rows : undefined;
  if (!Array.isArray(rows)) fail('batch.rows', 'must be an array of rows');
  else checkRows(rows, width, fail);
  checkConfirm(confirm, span, sink, fail);
}

function checkRows(
  rows: readonly unknown[],
  width: number,
  fail: (field: string, reason: string) => never,
): void {
  for (let i = 0; i < rows.length; i++) {
    const row: unknown = rows[i];
    if (typeof row !== 'object' || row === null) {
      fail(`batch.rows[${i}]`, 'must be an object with recordId and values');
    }
    const { recordId, values } = row as { recordId?: unknown; values?: unknown };
    if (!(recordId instanceof Uint8Array) || recordId.byteLength !== RECORD_ID_BYTES) {
      fail(`batch.rows[${i}].recordId`, `must be a Uint8Array of ${RECORD_ID_BYTES} bytes`);
    }
    if (!Array.isArray(values) || values.length !== width) {
      fail(
        `batch.rows[${i}].values`,
        `must hold ${width} values, one per column of the table spec (found ${Array.isArray(values) ? values.length : typeof values})`,
      );
    }
  }
}

function checkConfirm(
  confirm: Confirm<'secondary'>,
  span: OffsetSpan,
  sink: SinkId,
  fail: (field: string, reason: string) => never,
): void {
  // JavaScript callers can bypass the lane type: check the kind at run time.
  const kind: string = (confirm as { kind?: unknown }).kind as string;
  if (kind === 'none') return;
  if (kind !== 'derived-coverage') {
    fail('confirm.kind', `${JSON.stringify(kind)} is not a secondary confirmation`);
  }
  if (confirm.kind !== 'derived-coverage') return;
  if (confirm.sink !== sink) {
    fail('confirm.sink', `names sink "${confirm.sink}", but this sink is "${sink}"`);
  }
  const c = confirm.span;
  if (
    c.topic !== span.topic ||
    c.partition !== span.partition ||
    c.start !== span.start ||
    c.end !== span.end
  ) {
    fail('confirm.span', `${formatSpan(c)} is not the submitted span ${formatSpan(span)}`);
  }
}

function isSpanLike(span: unknown): span is OffsetSpan {
  if (typeof span !== 'object' || span === null) return false;
  const s = span as Record<string, unknown>;
  return (
    typeof s['topic'] === 'string' &&
    typeof s['partition'] === 'number' &&
    typeof s['start'] === 'number' &&
    typeof s['end'] === 'number'
  );
}

/** A row's own objects: the row, its values array, its 16-byte record id view. */
const ROW_OVERHEAD = 160;

/**
 * What rows hold on the heap, estimated from their values (what the queue
 * bound counts): per row its objects and a slot per value, a string's
 * header and one byte per character (two-byte strings count low), a byte
 * array's view and bytes, 64 for any other object (a jsonb value is not
 * walked). An estimate, cheap enough to make on every submit, that grows
 * with the rows' real size.
 */
export function rowsHeapBytes(rows: readonly PgRow[]): number {
  let bytes = 0;
  for (const row of rows) {
    bytes += ROW_OVERHEAD + 8 * row.values.length;
    for (const v of row.values) bytes += valueHeapBytes(v);
  }
  return bytes;
}

function valueHeapBytes(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return 16 + v.length;
    case 'number':
      return 16;
    case 'bigint':
      return 24;
    case 'object':
      if (v === null) return 0;
      return v instanceof Uint8Array ? 96 + v.byteLength : 64;
    default:
      return 0;
  }
}
