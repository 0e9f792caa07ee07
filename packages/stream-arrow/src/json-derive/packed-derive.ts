import {
  PackedJson,
  packedValue,
  type PackedRecords,
  type QuarantineNote,
} from '@thalweg/connector-core';
import { BatchBuilder, type Row } from '../batch-builder.js';
import { BatchSchema, type BatchSchemaDefinition } from '../batch-schema.js';
import { jsonRow, type JsonFields, type RecordMeta } from './json-fields.js';

/** What a JSON derivation is declared with: all of it plain data, so a worker can take it. */
export interface JsonDerivePlan {
  readonly schema: BatchSchemaDefinition;
  readonly fields?: JsonFields;
  /** The source's cluster, which record ids are hashed from (as raw hashes them). */
  readonly cluster: string;
}

/** One raw batch for the derivation: where it is from and its records, packed. */
export interface PackedBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: PackedRecords;
}

/**
 * What the derivation made of a packed batch: the accepted rows as one
 * Arrow IPC stream (a schema message, one batch, the end marker), or null
 * when none was accepted, and the records it refused, by index in the batch.
 */
export interface PackedDerived {
  readonly ipc: Uint8Array<ArrayBuffer> | null;
  readonly rows: number;
  readonly quarantined: readonly (QuarantineNote & { readonly index: number })[];
}

/** A plan made ready once: the schema checked, the builder and the row mapping built. */
export class JsonDeriver {
  private readonly builder: BatchBuilder;
  private readonly row: (value: unknown, meta: RecordMeta) => Row;

  constructor(private readonly plan: JsonDerivePlan) {
    const schema = BatchSchema.define(plan.schema);
    this.builder = new BatchBuilder(schema);
    this.row = jsonRow(schema, plan.fields);
  }

  /**
   * Derives one packed batch: each value parsed as UTF-8 JSON (a value that
   * is not is `decode`, naming the offset), mapped to its row and checked
   * against the schema (a refusal is `contract`, naming the field), and the
   * rows built into one batch whose record ids are hashed from the plan's
   * cluster and each record's offset and payload bytes. The same on any
   * thread, so recovery deriving the batch again gets the same bytes.
   */
  derive(batch: PackedBatch): PackedDerived {
    const { records, topic, partition } = batch;
    const rows: Row[] = [];
    const offsets: number[] = [];
    const payloads: Uint8Array[] = [];
    const quarantined: (QuarantineNote & { index: number })[] = [];
    const count = records.ends.length;
    const json = new PackedJson(records);
    for (let i = 0; i < count; i++) {
      const offset = records.offsets[i] ?? 0;
      let parsed: unknown;
      try {
        parsed = json.parse(i, offset);
      } catch (error) {
        quarantined.push({ index: i, offset, reason: 'decode', detail: message(error) });
        continue;
      }
      const meta = { offset, timestamp: records.timestamps[i] ?? 0, topic, partition };
      const row = this.row(parsed, meta);
      try {
        this.builder.validateRow(row, rows.length);
      } catch (error) {
        quarantined.push({ index: i, offset, reason: 'contract', detail: message(error) });
        continue;
      }
      rows.push(row);
      offsets.push(offset);
      payloads.push(packedValue(records, i));
    }
    if (rows.length === 0) return { ipc: null, rows: 0, quarantined };
    const provenance =
      this.builder.schema.recordId === 'none'
        ? undefined
        : { cluster: this.plan.cluster, topic, partition, offsets, payloads };
    // Built in the builder's arena, batch after batch: one fresh allocation, the message.
    const ipc = this.builder.encodeRows(rows, provenance);
    return { ipc: ipc as Uint8Array<ArrayBuffer>, rows: rows.length, quarantined };
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
