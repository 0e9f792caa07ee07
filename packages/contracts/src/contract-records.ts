import {
  formatSpan,
  recordIdHex,
  type OffsetSpan,
  type SourcePartition,
} from '@thalweg/connector-core';

/** The source cluster every contract record id is computed with (ADR 0003). */
export const CONTRACT_CLUSTER = 'contract';

/** One record a sink contract submits: its place, its payload and its id. */
export interface ContractRecord extends SourcePartition {
  readonly offset: number;
  /** UTF-8 text, so every store (a text column, a JSON row, raw bytes) can hold it as is. */
  readonly value: string;
  readonly bytes: Uint8Array;
  /** `_twg_record_id` of the record, 32 lower-case hex digits. */
  readonly idHex: string;
}

/**
 * One copy of a record as the store durably holds it, read back from the
 * store itself (files, another database connection, the server's log),
 * never from the sink's memory: that is what makes "durable" observable.
 */
export interface HeldRecord {
  readonly idHex: string;
  readonly value: string;
}

/** The id of the record at `offset` of `at` with payload `value`. */
export function contractRecordId(at: SourcePartition, offset: number, value: Uint8Array): string {
  return recordIdHex({
    cluster: CONTRACT_CLUSTER,
    topic: at.topic,
    partition: at.partition,
    offset,
    payload: value,
  });
}

/** The records of `span`, one per offset; `label` varies the payload (a changed record). */
export function contractRecords(span: OffsetSpan, label = 'v'): ContractRecord[] {
  const out: ContractRecord[] = [];
  for (let offset = span.start; offset < span.end; offset++) {
    const value = `${label}:${span.topic}/${span.partition}@${offset}`;
    const bytes = new TextEncoder().encode(value);
    out.push({
      topic: span.topic,
      partition: span.partition,
      offset,
      value,
      bytes,
      idHex: contractRecordId(span, offset, bytes),
    });
  }
  return out;
}

export function spanKey(span: OffsetSpan): string {
  return formatSpan(span);
}
