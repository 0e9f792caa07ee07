import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import type { ZerobusPeer } from '../peer/zerobus-peer.js';

export interface Audit {
  /** Sent ids the peer never acknowledged: loss. */
  readonly missing: string[];
  /** Rows received beyond one per id: what record-id dedup absorbs. */
  readonly duplicates: number;
  /** Duplicated ids not explained by a batch the peer received and never acknowledged. */
  readonly unexplained: string[];
}

/**
 * Compares what was sent with what the peer holds. A duplicate is
 * explained when the id also sits in a batch the peer received but never
 * acknowledged: the client could not know it had landed and replayed it.
 */
export function audit(peer: ZerobusPeer, table: string, sent: Iterable<string>): Audit {
  const acknowledged = new Set(peer.values(table, RECORD_ID_COLUMN, true));
  const missing = [...sent].filter((id) => !acknowledged.has(id));
  const counts = new Map<unknown, number>();
  for (const id of peer.values(table, RECORD_ID_COLUMN)) counts.set(id, (counts.get(id) ?? 0) + 1);
  const unacknowledged = new Set(
    peer.batches
      .filter((b) => b.table === table && !b.acknowledged)
      .flatMap((b) => (b.values ?? []).map((row) => row[RECORD_ID_COLUMN])),
  );
  let duplicates = 0;
  const unexplained: string[] = [];
  for (const [id, n] of counts) {
    if (n < 2) continue;
    duplicates += n - 1;
    if (!unacknowledged.has(id)) unexplained.push(String(id));
  }
  return { missing, duplicates, unexplained };
}
