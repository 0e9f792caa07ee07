import type { RecordBatch } from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueIdentifier } from '@thalweg/test-services';
import { IcebergError, scanWindow, type WindowRequest } from '../src/index.js';
import { RAW_SCHEMA, readTable, writeTable, type Written } from './support/iceberg-peers.js';
import { icebergSource } from './support/test-source.js';

const NAMESPACE = 'thalweg_read';

/** Rows of our batches as JSON-like objects, as read_table.py prints them. */
function rows(batches: readonly RecordBatch[]): unknown[] {
  return batches.flatMap((b) =>
    b.toArray().map((row: { toJSON(): unknown }) => {
      const r = row.toJSON() as { partition: number; offset: bigint; value: string | null };
      return { partition: r.partition, offset: Number(r.offset), value: r.value };
    }),
  );
}

/** Rows sorted by offset, then by their JSON: equal offsets in one order whoever read them. */
function canonical(list: readonly unknown[]): string[] {
  return list
    .map((r) => [(r as { offset: number }).offset, JSON.stringify(r)] as const)
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([, json]) => json);
}

async function collect(
  request: WindowRequest,
): Promise<{ rows: unknown[]; scan: Awaited<ReturnType<typeof scanWindow>> }> {
  const scan = await scanWindow(icebergSource(), request);
  const batches: RecordBatch[] = [];
  for await (const b of scan.batches()) batches.push(b);
  return { rows: rows(batches), scan };
}

// pyiceberg writes a raw-like table in four appends (four snapshots, one
// zstd Parquet file each): two partitions interleaved, offsets rising
// through the appends, and a fourth append that rewrites offsets 20..24 of
// partition 1 (a record raw received twice). Our reader's windows are
// compared with pyiceberg's scan of the same filter.
describe('Iceberg read path against a REST catalog and pyiceberg', () => {
  const table = uniqueIdentifier('raw');
  const writes: Written[] = [];
  const request = (p: number, start: number, end: number, snapshotId?: bigint): WindowRequest => ({
    namespace: NAMESPACE,
    table,
    columns: { partition: 'partition', offset: 'offset' },
    partition: p,
    start,
    end,
    ...(snapshotId === undefined ? {} : { snapshotId }),
  });
  const filter = (p: number, start: number, end: number): string =>
    `partition = ${p} and offset >= ${start} and offset < ${end}`;

  beforeAll(async () => {
    const append = (
      offsets: readonly number[],
      p: (o: number) => number,
      tag = 'v',
    ): Promise<Written> =>
      writeTable({
        namespace: NAMESPACE,
        table,
        schema: RAW_SCHEMA,
        rows: offsets.map((o) => ({
          partition: p(o),
          offset: o,
          value: o % 7 === 0 ? null : `${tag}${o}-${p(o)}`,
        })),
      });
    const range = (a: number, b: number): number[] =>
      Array.from({ length: b - a }, (_, i) => a + i);
    writes.push(await append(range(0, 40), (o) => Math.floor(o / 5) % 2));
    writes.push(await append(range(40, 80), (o) => Math.floor(o / 5) % 2));
    writes.push(await append(range(80, 120), () => 0));
    writes.push(await append(range(20, 25), () => 0, 'again'));
  }, 120_000);

  it('wrote what the test expects: four snapshots, zstd Parquet', () => {
    expect(writes.map((w) => w.data_files.length)).toEqual([1, 2, 3, 4]);
    for (const w of writes) for (const f of w.data_files) expect(f.codecs).toEqual(['ZSTD']);
  });

  it.each([
    [0, 0, 200],
    [1, 0, 200],
    [0, 33, 91],
    [1, 12, 47],
    [0, 18, 27],
    [0, 95, 96],
    [1, 80, 120],
  ])(
    'partition %i, offsets [%i, %i): the rows pyiceberg reads, in offset order',
    async (p, start, end) => {
      const { rows: ours, scan } = await collect(request(p, start, end));
      const theirs = await readTable(`${NAMESPACE}.${table}`, filter(p, start, end));
      // the same rows; pyiceberg orders a twice-written offset its own way
      expect(canonical(ours)).toEqual(canonical(theirs));
      expect(ours).toHaveLength(theirs.length);
      const offsets = ours.map((r) => (r as { offset: number }).offset);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
      expect(scan.snapshot.id).toBe(BigInt(writes[3]!.snapshot_id));
      expect(scan.files.length + scan.prunedFiles).toBe(4);
    },
  );

  it('prunes files by offset and partition bounds, reading only the ones that may hold the window', async () => {
    const { scan } = await collect(request(0, 95, 96));
    const third = writes[2]!.data_files.filter(
      (f) => !writes[1]!.data_files.some((g) => g.path === f.path),
    );
    expect(scan.files.map((f) => f.path)).toEqual(third.map((f) => f.path));
    expect(scan.prunedFiles).toBe(3);
    // partition 1 has no row in the third and fourth files: their partition bounds are [0, 0]
    const { scan: p1 } = await collect(request(1, 0, 200));
    expect(p1.files).toHaveLength(2);
  });

  it('a twice-written offset comes twice, the older commit first', async () => {
    const { rows: ours } = await collect(request(0, 20, 25));
    expect(ours.map((r) => (r as { offset: number }).offset)).toEqual([
      20, 20, 21, 21, 22, 22, 23, 23, 24, 24,
    ]);
  });

  it('reads an older snapshot, and tells its time and summary', async () => {
    const first = BigInt(writes[0]!.snapshot_id);
    const { rows: ours, scan } = await collect(request(0, 0, 200, first));
    expect(scan.snapshot.id).toBe(first);
    expect(scan.snapshot.summary).toMatchObject({
      operation: 'append',
      'added-records': '40',
      'total-records': '40',
    });
    expect(scan.snapshot.timestampMs).toBeGreaterThan(Date.UTC(2020, 0, 1));
    expect(ours).toEqual(
      await readTable(`${NAMESPACE}.${table}`, filter(0, 0, 200), writes[0]!.snapshot_id),
    );
    expect(ours).toHaveLength(20);
  });

  it('a missing table is an error naming it', async () => {
    const error = await scanWindow(icebergSource(), {
      ...request(0, 0, 1),
      table: 'no_such_table',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IcebergError);
    expect(error).toMatchObject({
      code: 'TWG_ICEBERG_TABLE_NOT_FOUND',
      subject: `${NAMESPACE}.no_such_table`,
      status: 404,
    });
    expect((error as Error).message).toMatch(
      /thalweg_read\.no_such_table: GET .* answered 404: NoSuchTableException: /,
    );
  });

  it('a window on a column that is not int or long is refused, naming it', async () => {
    await expect(
      scanWindow(icebergSource(), {
        ...request(0, 0, 1),
        columns: { partition: 'partition', offset: 'value' },
      }),
    ).rejects.toThrow(`TWG_ICEBERG_UNSUPPORTED: ${NAMESPACE}.${table}: column value is "string"`);
  });
});
