import { readFakeServerBatches } from '@thalweg/sink-zerobus';
import { decodeIpcStream } from '@thalweg/stream-arrow';
import { HarnessError } from './errors.js';
import type { RawContents } from './raw-audit.js';
import { RECORD_ID_COLUMN, zerobusDir } from './zerobus-topology.js';

/** What the durable fake Zerobus server acknowledged, over every child of the run. */
export interface ZerobusContents {
  /** Record ids (hex) of every acknowledged row. */
  readonly recordIds: ReadonlySet<string>;
  /** The payloads' unique ids of every acknowledged row. */
  readonly payloadIds: ReadonlySet<string>;
  readonly batches: number;
  readonly rows: number;
}

/**
 * Decodes every batch the server persisted before acknowledging it. A torn
 * last record of a killed child's log is skipped by the reader (it was
 * never acknowledged); anything else unreadable fails the check.
 */
export async function readZerobus(dir: string): Promise<ZerobusContents> {
  const recordIds = new Set<string>();
  const payloadIds = new Set<string>();
  let rows = 0;
  const payloads = await readFakeServerBatches(zerobusDir(dir));
  for (const ipc of payloads) {
    const batch = decodeIpcStream(ipc);
    const ids = batch.getChild(RECORD_ID_COLUMN);
    const names = batch.getChild('id');
    if (ids === null || names === null) {
      throw new HarnessError(
        'TWG_HARNESS_ZEROBUS',
        `a Zerobus batch of ${batch.numRows} rows without the ${RECORD_ID_COLUMN} or id column`,
      );
    }
    for (let i = 0; i < batch.numRows; i++) {
      const rid: unknown = ids.get(i);
      const pid: unknown = names.get(i);
      if (typeof rid === 'string') recordIds.add(rid);
      if (typeof pid === 'string') payloadIds.add(pid);
    }
    rows += batch.numRows;
  }
  return { recordIds, payloadIds, batches: payloads.length, rows };
}

/**
 * Whether Zerobus holds the record at a position. Its rows carry no
 * position: it does when it acknowledged the record id raw's record there
 * hashes to (and it cannot be shown to when raw lacks the offset).
 */
export function heldByZerobus(
  raw: RawContents,
  zerobus: ZerobusContents,
): (partition: number, offset: number) => boolean {
  return (partition, offset) => {
    const held = raw.records[partition]?.get(offset);
    return held !== undefined && zerobus.recordIds.has(held.recordId);
  };
}
