import {
  formatSpan,
  type Confirm,
  type OffsetSpan,
  type SourceBatch,
} from '@thalweg/connector-core';
import { sourceBatchProblem, spanProblem } from '@thalweg/stream-arrow';
import { RawSinkError } from './errors.js';

/**
 * Checks a source batch before anything of it is queued or written (see
 * stream-arrow's `sourceBatchProblem`). The first problem is reported with
 * the offset (or the record index, when the offset itself is bad), so the
 * batch can be quarantined or the source fixed; nothing is written.
 */
export function checkSourceBatch(batch: SourceBatch): OffsetSpan {
  const problem = sourceBatchProblem(batch);
  if (problem !== null) {
    throw new RawSinkError('TWG_RAW_BATCH_INVALID', problem.reason, {
      field: problem.field,
      ...(problem.offset === undefined ? {} : { offset: problem.offset }),
    });
  }
  return batch.span;
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
  const checked = spanProblem(span, field);
  if ('reason' in checked)
    throw new RawSinkError('TWG_RAW_BATCH_INVALID', checked.reason, { field: checked.field });
  return checked;
}
