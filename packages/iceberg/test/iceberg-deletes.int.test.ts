import type { RecordBatch } from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueIdentifier } from '@thalweg/test-services';
import { scanWindow, type WindowRequest } from '../src/index.js';
import { RAW_SCHEMA, readTable, writeTable, type Written } from './support/iceberg-peers.js';
import { icebergSource } from './support/test-source.js';

const NAMESPACE = 'thalweg_read';

async function offsets(request: WindowRequest): Promise<{ offsets: number[]; snapshot: bigint }> {
  const scan = await scanWindow(icebergSource(), request);
  const batches: RecordBatch[] = [];
  for await (const b of scan.batches()) batches.push(b);
  return {
    offsets: batches.flatMap((b) =>
      [...(b.getChild('offset')?.toArray() as BigInt64Array)].map(Number),
    ),
    snapshot: scan.snapshot.id,
  };
}

// pyiceberg deletes rows copy-on-write: the file holding them is rewritten
// without them, and the new snapshot's manifest records the old file as
// DELETED. The reader must skip that entry, or it replays deleted rows.
describe('a table pyiceberg deleted rows from (copy-on-write)', () => {
  const table = uniqueIdentifier('cow');
  const writes: Written[] = [];
  const request = (start: number, end: number, snapshotId?: bigint): WindowRequest => ({
    namespace: NAMESPACE,
    table,
    columns: { partition: 'partition', offset: 'offset' },
    partition: 0,
    start,
    end,
    ...(snapshotId === undefined ? {} : { snapshotId }),
  });

  beforeAll(async () => {
    for (const [a, b] of [
      [0, 30],
      [30, 60],
    ] as const) {
      const rows = Array.from({ length: b - a }, (_, i) => ({
        partition: 0,
        offset: a + i,
        value: `v${a + i}`,
      }));
      writes.push(await writeTable({ namespace: NAMESPACE, table, schema: RAW_SCHEMA, rows }));
    }
    writes.push(
      await writeTable({ namespace: NAMESPACE, table, delete: 'offset >= 10 and offset < 20' }),
    );
  }, 120_000);

  it('the delete wrote a new snapshot, and no delete file', () => {
    expect(writes[2]!.snapshot_id).not.toBe(writes[1]!.snapshot_id);
    expect(writes[2]!.data_files.reduce((n, f) => n + f.records, 0)).toBe(50);
  });

  it('reads the rows pyiceberg reads: the deleted ones are gone', async () => {
    const { offsets: ours, snapshot } = await offsets(request(0, 100));
    expect(snapshot).toBe(BigInt(writes[2]!.snapshot_id));
    const theirs = (await readTable(`${NAMESPACE}.${table}`, 'partition = 0')).map(
      (r) => (r as { offset: number }).offset,
    );
    expect(ours).toEqual(theirs);
    expect(ours).toEqual([
      ...Array.from({ length: 10 }, (_, i) => i),
      ...Array.from({ length: 40 }, (_, i) => 20 + i),
    ]);
  });

  it('the snapshot before the delete still holds them', async () => {
    const { offsets: ours } = await offsets(request(5, 25, BigInt(writes[1]!.snapshot_id)));
    expect(ours).toEqual(Array.from({ length: 20 }, (_, i) => 5 + i));
  });
});
