import { mapRecords, type SyncDerivation, type SourceRecord } from '@thalweg/connector-core';
import type { RecordBatch } from 'apache-arrow';
import type { BatchBuilder } from './batch-builder.js';
import type { Row } from './batch-builder.js';

/**
 * The derivation of a secondary that writes Arrow batches (Zerobus, Flight):
 * each record's row from `row` (through connector-core's mapRecords, so a
 * throw quarantines it), checked against the builder's schema (a refusal is
 * `contract`, naming the field), built into one batch whose record ids are
 * hashed from `cluster` as raw hashes them.
 */
export function rowsToBatch(
  builder: BatchBuilder,
  row: (record: SourceRecord) => object,
  cluster: string,
): SyncDerivation<RecordBatch> {
  const { schema } = builder;
  return (batch, derivation) => {
    const mapped = mapRecords(batch, derivation, row);
    const rows: Row[] = [];
    const offsets: number[] = [];
    const payloads: Uint8Array[] = [];
    mapped.records.forEach((record, i) => {
      const value = mapped.mapped[i];
      try {
        builder.validateRow(value, rows.length);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        derivation.quarantine(record, 'contract', detail);
        return;
      }
      rows.push(value as Row);
      offsets.push(record.offset);
      payloads.push(record.value);
    });
    if (rows.length === 0) return null;
    const { topic, partition } = batch.span;
    const provenance =
      schema.recordId === 'none' ? undefined : { cluster, topic, partition, offsets, payloads };
    return builder.fromRows(rows, provenance);
  };
}
