import type { QuarantineNote, SourceBatch, SourceRecord } from '@thalweg/connector-core';
import type { RecordBatch } from 'apache-arrow';
import type { BatchBuilder, Row } from './batch-builder.js';

export interface JsonRecordsResult {
  /** The accepted records as one batch, or null when none was accepted. */
  readonly batch: RecordBatch | null;
  /** The records the conversion quarantined: `decode` (not UTF-8 JSON) or `contract` (not the schema). */
  readonly quarantined: readonly QuarantineNote[];
}

/** Turns a parsed JSON value (and its source record) into the row to build. */
export type JsonRowMapper = (value: unknown, record: SourceRecord) => unknown;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Converts a source batch of JSON records into one Arrow batch for
 * `builder`'s schema, record by record: a record that is not UTF-8 JSON is
 * quarantined as `decode`, one that does not fit the schema (after `map`) as
 * `contract`, each naming why; the others are built together, with the
 * record id computed from `cluster` and each record's source offset and
 * payload bytes when the schema carries one. Deterministic, so recovery
 * re-deriving the same raw batch gets the same rows and ids.
 */
export function jsonRecordsToBatch(
  builder: BatchBuilder,
  cluster: string,
  batch: SourceBatch,
  map: JsonRowMapper = (value) => value,
): JsonRecordsResult {
  const rows: Row[] = [];
  const offsets: number[] = [];
  const payloads: Uint8Array[] = [];
  const quarantined: QuarantineNote[] = [];
  for (const record of batch.records) {
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(record.value));
    } catch (error) {
      quarantined.push({ offset: record.offset, reason: 'decode', detail: reason(error) });
      continue;
    }
    let row: unknown;
    try {
      row = map(value, record);
      builder.validateRow(row, rows.length);
    } catch (error) {
      quarantined.push({ offset: record.offset, reason: 'contract', detail: reason(error) });
      continue;
    }
    rows.push(row as Row);
    offsets.push(record.offset);
    payloads.push(record.value);
  }
  if (rows.length === 0) return { batch: null, quarantined };
  const provenance =
    builder.schema.recordId === 'none'
      ? undefined
      : { cluster, topic: batch.span.topic, partition: batch.span.partition, offsets, payloads };
  return { batch: builder.fromRows(rows, provenance), quarantined };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
