import { RecordIdHasher } from '@thalweg/connector-core';
import { readFakeServerBatches } from '@thalweg/sink-zerobus';
import { decodeIpcStream } from '@thalweg/stream-arrow';
import { HarnessError } from './errors.js';
import type { HarnessSource } from './harness-source.js';
import { CLUSTER } from './harness-topology.js';
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
 * Whether Zerobus holds the record at a position: it acknowledged the id
 * the record there hashes to. That record is raw's where raw holds the
 * offset, and otherwise the one the run produced there (`produced`). A
 * batch is offered to the secondaries as soon as raw has taken it, not once
 * raw made it durable, so a child killed in between leaves a secondary's
 * claim over records raw lacks. That is no loss: the source's position did
 * not move, so it delivers them again, and raw writes them under the same
 * ids. It is a claim Zerobus must still back with the rows.
 */
export function heldByZerobus(
  raw: RawContents,
  zerobus: ZerobusContents,
  produced: Pick<HarnessSource, 'topic' | 'payloadAt'>,
): (partition: number, offset: number) => boolean {
  const hashers = new Map<number, RecordIdHasher>();
  const producedId = (partition: number, offset: number): string | null => {
    const value = produced.payloadAt(partition, offset);
    if (value === undefined) return null;
    let hasher = hashers.get(partition);
    if (hasher === undefined) {
      hasher = new RecordIdHasher(CLUSTER, produced.topic, partition);
      hashers.set(partition, hasher);
    }
    return hasher.id(offset, Buffer.from(value)).toString('hex');
  };
  return (partition, offset) => {
    const id = raw.records[partition]?.get(offset)?.recordId ?? producedId(partition, offset);
    return id !== null && zerobus.recordIds.has(id);
  };
}
