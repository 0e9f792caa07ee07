import type { RawContents } from './raw-audit.js';
import { PG } from './harness-topology.js';
import type { TableRow } from './table-audit.js';
import type { ZerobusContents } from './zerobus-audit.js';
import { ZEROBUS } from './zerobus-topology.js';

export interface FinalAudit {
  /** Produced records raw lacks: by produced offset, or by payload id. */
  readonly missingRaw: number;
  /** The sum over the secondaries of `missingBySink`. */
  readonly missingSecondary: number;
  /** Per secondary: produced records it lacks, by position or by payload id (the larger). */
  readonly missingBySink: Readonly<Record<string, number>>;
  /** Record ids the Zerobus server acknowledged that no record raw holds hashes to. */
  readonly zerobusUnknownIds: number;
  readonly duplicateRows: number;
  readonly idMismatches: number;
  /** Record copies in raw's segments beyond the first of each offset. */
  readonly rawDuplicates: number;
}

export interface FinalAuditInput {
  /** Per partition, the offsets of the produced records (Kafka: [0, log end)). */
  readonly offsets: readonly (readonly number[])[];
  /** The payload ids of every produced record. */
  readonly producedIds: readonly string[];
  readonly raw: RawContents;
  readonly rows: readonly TableRow[];
  readonly zerobus: ZerobusContents;
}

/**
 * Checks the end state against what was produced, two ways: by position
 * (every offset a produced record got) and by content (every produced payload
 * id), so neither a hole nor a record stored at the wrong place hides.
 * A missing count is the larger of the two ways, never their sum. Zerobus
 * rows carry no position: one is at its offset when it holds the record id
 * recomputed from raw's record there.
 */
export function auditFinal(input: FinalAuditInput): FinalAudit {
  const { offsets, raw, rows } = input;
  let rawHoles = 0;
  const rawIds = new Set<string>();
  let unique = 0;
  raw.records.forEach((held) => {
    unique += held.size;
  });
  offsets.forEach((produced, p) => {
    const held = raw.records[p];
    for (const o of produced) if (held?.has(o) !== true) rawHoles += 1;
    for (const r of held?.values() ?? []) if (r.payloadId !== null) rawIds.add(r.payloadId);
  });
  const byPosition = new Map<string, TableRow[]>();
  const rowIds = new Set<string>();
  for (const row of rows) {
    const key = `${row.partition}/${row.offset}`;
    const same = byPosition.get(key);
    if (same === undefined) byPosition.set(key, [row]);
    else same.push(row);
    rowIds.add(row.id);
  }
  let rowHoles = 0;
  offsets.forEach((produced, p) => {
    for (const o of produced) if (!byPosition.has(`${p}/${o}`)) rowHoles += 1;
  });
  let duplicateRows = 0;
  let idMismatches = 0;
  for (const same of byPosition.values()) {
    duplicateRows += same.length - 1;
    for (const row of same) {
      const held = raw.records[row.partition]?.get(row.offset);
      if (held?.recordId !== row.recordId || held.payloadId !== row.id) idMismatches += 1;
    }
  }
  const missingIds = (ids: ReadonlySet<string>): number =>
    input.producedIds.reduce((n, id) => (ids.has(id) ? n : n + 1), 0);
  const { zerobus } = input;
  let zerobusHoles = 0;
  const rawRecordIds = new Set<string>();
  raw.records.forEach((held) => {
    for (const r of held.values()) rawRecordIds.add(r.recordId);
  });
  offsets.forEach((produced, p) => {
    const held = raw.records[p];
    for (const o of produced) {
      const record = held?.get(o);
      if (record === undefined || !zerobus.recordIds.has(record.recordId)) zerobusHoles += 1;
    }
  });
  let zerobusUnknownIds = 0;
  for (const id of zerobus.recordIds) if (!rawRecordIds.has(id)) zerobusUnknownIds += 1;
  const missingBySink = {
    [PG]: Math.max(rowHoles, missingIds(rowIds)),
    [ZEROBUS]: Math.max(zerobusHoles, missingIds(zerobus.payloadIds)),
  };
  return {
    missingRaw: Math.max(rawHoles, missingIds(rawIds)),
    missingSecondary: Object.values(missingBySink).reduce((a, b) => a + b, 0),
    missingBySink,
    zerobusUnknownIds,
    duplicateRows,
    idMismatches,
    rawDuplicates: Math.max(0, raw.copies - unique),
  };
}
