import {
  Field,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  tableFromIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import type { ContractRecord, HeldRecord } from '@thalweg/contracts';
import type { StreamField } from '../../src/index.js';

/** The contract table: the record id and the payload, both text. */
export const CONTRACT_FIELDS: readonly StreamField[] = [
  { name: RECORD_ID_COLUMN, type: 'utf8', nullable: false },
  { name: 'label', type: 'utf8', nullable: false },
];

export const CONTRACT_SCHEMA = new Schema([
  new Field(RECORD_ID_COLUMN, new Utf8(), false),
  new Field('label', new Utf8(), false),
]);

/** The rows of `records` (none, for the malformed batch) under CONTRACT_SCHEMA. */
export function contractBatch(records: readonly ContractRecord[]): RecordBatch {
  const column = (values: string[]) => vectorFromArray(values, new Utf8()).data[0]!;
  return new RecordBatch(
    CONTRACT_SCHEMA,
    makeData({
      type: new Struct(CONTRACT_SCHEMA.fields),
      length: records.length,
      nullCount: 0,
      children: [column(records.map((r) => r.idHex)), column(records.map((r) => r.value))],
    }),
  );
}

/** The rows of Arrow IPC stream payloads, as the server received them. */
export function heldRows(payloads: readonly Uint8Array[]): HeldRecord[] {
  const out: HeldRecord[] = [];
  for (const payload of payloads) {
    for (const row of tableFromIPC(payload)) {
      const r = row as unknown as Record<string, unknown>;
      out.push({ idHex: String(r[RECORD_ID_COLUMN]), value: String(r['label']) });
    }
  }
  return out;
}
