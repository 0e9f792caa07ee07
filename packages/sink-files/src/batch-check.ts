import {
  InvalidInputError,
  checkOffset,
  formatSpan,
  offsetSpan,
  type Confirm,
  type OffsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import { RawSinkError, reasonOf } from './errors.js';
import { headersProblem } from './headers-codec.js';

/**
 * Checks a source batch before anything of it is queued or written: a valid
 * span, and records whose offsets lie inside it in strictly ascending order,
 * each with the types raw stores losslessly. The first problem is reported
 * with the offset (or the record index, when the offset itself is bad), so
 * the batch can be quarantined or the source fixed; nothing is written.
 */
export function checkSourceBatch(batch: SourceBatch): OffsetSpan {
  const span = checkSpan(batch.span, 'batch.span');
  const records: readonly SourceRecord[] = batch.records;
  if (!isArray(records)) {
    throw new RawSinkError('TWG_RAW_BATCH_INVALID', 'must be an array', {
      field: 'batch.records',
    });
  }
  let previous = -1;
  records.forEach((record, i) => {
    const at = `batch.records[${i}]`;
    if (typeof record !== 'object' || (record as SourceRecord | null) === null) {
      throw new RawSinkError('TWG_RAW_BATCH_INVALID', 'must be a record object', { field: at });
    }
    let offset: number;
    try {
      offset = checkOffset(record.offset, `${at}.offset`);
    } catch (cause) {
      throw new RawSinkError('TWG_RAW_BATCH_INVALID', reasonOf(cause), { field: `${at}.offset` });
    }
    const bad = (field: string, reason: string) =>
      new RawSinkError('TWG_RAW_BATCH_INVALID', reason, { field: `${at}.${field}`, offset });
    if (offset < span.start || offset >= span.end) {
      throw bad('offset', `lies outside the batch span ${formatSpan(span)}`);
    }
    if (offset <= previous) {
      throw bad('offset', `does not ascend (the record before it has offset ${previous})`);
    }
    previous = offset;
    if (record.key !== null && !(record.key instanceof Uint8Array)) {
      throw bad('key', 'must be a Uint8Array or null');
    }
    if (!(record.value instanceof Uint8Array)) throw bad('value', 'must be a Uint8Array');
    const tombstone: unknown = record.tombstone;
    if (tombstone !== undefined && tombstone !== true) {
      throw bad('tombstone', 'must be true or absent');
    }
    if (tombstone === true && record.value.byteLength !== 0) {
      throw bad('value', 'must be empty on a tombstone (a record with no value)');
    }
    // Stored as int64 milliseconds: a fraction or a non-finite value would not
    // come back as it was delivered, so it is refused rather than rounded.
    if (!Number.isSafeInteger(record.timestamp)) {
      throw bad('timestamp', `${String(record.timestamp)} is not an integer of milliseconds`);
    }
    const problem = headersProblem(record.headers);
    if (problem !== null) throw bad('headers', problem);
  });
  return span;
}

/**
 * The span given to `submit` must be the batch's own span, and a raw-anchor
 * confirmation must anchor exactly that span: a token for another span would
 * move the source position past records raw never received.
 */
export function checkSubmission(
  batch: SourceBatch,
  span: OffsetSpan,
  confirm: Confirm<'primary-raw'>,
): void {
  const given = checkSpan(span, 'span');
  const own = batch.span;
  if (
    given.topic !== own.topic ||
    given.partition !== own.partition ||
    given.start !== own.start ||
    given.end !== own.end
  ) {
    throw new RawSinkError(
      'TWG_RAW_BATCH_INVALID',
      `${formatSpan(given)} is not the batch's span ${formatSpan(own)}`,
      { field: 'span' },
    );
  }
  if (confirm.kind === 'raw-anchor') {
    const anchor = confirm.span;
    if (
      anchor.topic !== given.topic ||
      anchor.partition !== given.partition ||
      anchor.start !== given.start ||
      anchor.end !== given.end
    ) {
      throw new RawSinkError(
        'TWG_RAW_BATCH_INVALID',
        `anchors ${formatSpan(anchor)}, but the batch spans ${formatSpan(given)}`,
        { field: 'confirm.span' },
      );
    }
  }
}

/** A span checked by connector-core, a refusal naming `field` and the bad part. */
export function checkSpan(span: OffsetSpan, field: string): OffsetSpan {
  try {
    return offsetSpan(span.topic, span.partition, span.start, span.end);
  } catch (cause) {
    const inner = cause instanceof InvalidInputError ? `.${cause.field}` : '';
    throw new RawSinkError('TWG_RAW_BATCH_INVALID', reasonOf(cause), {
      field: `${field}${inner}`,
    });
  }
}

/** Array.isArray without its `any[]` narrowing: this only checks a caller's claim. */
function isArray(value: unknown): boolean {
  return Array.isArray(value);
}
