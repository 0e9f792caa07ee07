import { DURABLE_KINDS, formatSpan, type SinkId } from '@thalweg/connector-core';
import { checkRange } from './covered-range.js';
import type { DurableReceipt } from './coverage-store.js';
import { CoverageError } from './errors.js';

/**
 * The checks every backend runs on a whole call before writing anything, so
 * that a refused call changes nothing: the sink is known, the receipt proves
 * durability (JavaScript callers bypass the type), the span is a valid range.
 */
export function checkReceipt(r: DurableReceipt, sinks: ReadonlySet<SinkId>): void {
  checkSink(r.sink, sinks);
  if (!(DURABLE_KINDS as readonly string[]).includes(r.durability)) {
    throw new CoverageError(
      'TWG_COVERAGE_NOT_DURABLE',
      `receipt for ${formatSpan(r.span)} of sink "${r.sink}" has durability "${r.durability}", ` +
        'which does not prove a durable acknowledgement; coverage recorded from it could over-claim',
    );
  }
  checkRange(r.span.start, r.span.end, `receipt(${r.sink}).span`);
}

export function checkSink(sink: SinkId, sinks: ReadonlySet<SinkId>): void {
  if (!sinks.has(sink)) {
    throw new CoverageError(
      'TWG_COVERAGE_UNKNOWN_SINK',
      `sink "${sink}" is not one of this store's sinks (${[...sinks].join(', ')})`,
    );
  }
}
