import {
  InvalidInputError,
  checkOffset,
  formatSpan,
  headersProblem,
  offsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';

/** What is wrong with a source batch: the field (`batch.records[3].key`), why, and the record's offset when known. */
export interface SourceBatchProblem {
  readonly field: string;
  readonly reason: string;
  readonly offset?: number;
}

/**
 * The first problem of a source batch a raw would store, or null: a valid
 * span, and records whose offsets lie inside it in strictly ascending order,
 * each with the types raw stores losslessly. Every raw checks its batches
 * with this before anything of them is queued or written, and refuses with
 * its own error naming the field and offset.
 */
export function sourceBatchProblem(batch: SourceBatch): SourceBatchProblem | null {
  const span = spanProblem(batch.span, 'batch.span');
  if ('reason' in span) return span;
  const records: readonly SourceRecord[] = batch.records;
  if (!isArray(records)) return { field: 'batch.records', reason: 'must be an array' };
  let previous = -1;
  for (const [i, record] of records.entries()) {
    const at = `batch.records[${i}]`;
    if (typeof record !== 'object' || (record as SourceRecord | null) === null)
      return { field: at, reason: 'must be a record object' };
    let offset: number;
    try {
      offset = checkOffset(record.offset, `${at}.offset`);
    } catch (cause) {
      return { field: `${at}.offset`, reason: reasonOf(cause) };
    }
    const bad = (field: string, reason: string): SourceBatchProblem => ({
      field: `${at}.${field}`,
      reason,
      offset,
    });
    if (offset < span.start || offset >= span.end)
      return bad('offset', `lies outside the batch span ${formatSpan(span)}`);
    if (offset <= previous)
      return bad('offset', `does not ascend (the record before it has offset ${previous})`);
    previous = offset;
    if (record.key !== null && !(record.key instanceof Uint8Array))
      return bad('key', 'must be a Uint8Array or null');
    if (!(record.value instanceof Uint8Array)) return bad('value', 'must be a Uint8Array');
    const tombstone: unknown = record.tombstone;
    if (tombstone !== undefined && tombstone !== true)
      return bad('tombstone', 'must be true or absent');
    if (tombstone === true && record.value.byteLength !== 0)
      return bad('value', 'must be empty on a tombstone (a record with no value)');
    // Stored as int64 milliseconds: a fraction or a non-finite value would not
    // come back as it was delivered, so it is refused rather than rounded.
    if (!Number.isSafeInteger(record.timestamp))
      return bad('timestamp', `${String(record.timestamp)} is not an integer of milliseconds`);
    const problem = headersProblem(record.headers);
    if (problem !== null) return bad('headers', problem);
  }
  return null;
}

/** The span checked by connector-core, or the problem naming `field` and the bad part. */
export function spanProblem(
  span: SourceBatch['span'],
  field: string,
): SourceBatch['span'] | SourceBatchProblem {
  try {
    return offsetSpan(span.topic, span.partition, span.start, span.end);
  } catch (cause) {
    const inner = cause instanceof InvalidInputError ? `.${cause.field}` : '';
    return { field: `${field}${inner}`, reason: reasonOf(cause) };
  }
}

function reasonOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** Array.isArray without its `any[]` narrowing: this only checks a caller's claim. */
function isArray(value: unknown): boolean {
  return Array.isArray(value);
}
