import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SourceBatch, SourceRecord } from '@thalweg/connector-core';
import { rawTableBatch } from '@thalweg/stream-arrow';
import { uniqueIdentifier } from '@thalweg/test-services';
import { RecordBatchStreamWriter, type RecordBatch } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IcebergRaw } from '../src/index.js';
import { writeTable } from './support/iceberg-peers.js';
import { icebergSource } from './support/test-source.js';

const NAMESPACE = 'thalweg_raw';
const TOPIC = 'orders';

const record = (offset: number): SourceRecord => ({
  offset,
  key: offset % 3 === 0 ? null : new Uint8Array([offset & 0xff]),
  value: new Uint8Array(Buffer.from(`value-${offset}`)),
  timestamp: 1_750_000_000_000 + offset,
  headers: offset % 2 === 0 ? [['h', new Uint8Array([1, 2])]] : [],
});

/** A source batch of `partition` holding the given offsets, spanning [start, end). */
const batch = (partition: number, start: number, end: number, offsets: number[]): SourceBatch => ({
  span: { topic: TOPIC, partition, start, end },
  records: offsets.map(record),
});

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);

async function collect(raw: IcebergRaw, partition: number, start: number, end: number) {
  const out: SourceBatch[] = [];
  for await (const b of raw.read({ topic: TOPIC, partition, start, end })) out.push(b);
  return out;
}

// Raw table rows (stream-arrow raw-table-rows.ts) appended by pyiceberg, as
// a lakehouse raw's writer and its metadata commits would leave them: each
// call of `commit` is one Iceberg snapshot of the rows given.
describe('IcebergRaw: raw read back through a REST catalog', () => {
  const table = uniqueIdentifier('raw');
  let dir: string;
  let files = 0;
  const commit = async (rows: readonly RecordBatch[]) => {
    const paths: string[] = [];
    for (const r of rows) {
      const path = join(dir, `rows-${files++}.arrows`);
      await writeFile(path, RecordBatchStreamWriter.writeAll([r]).toUint8Array(true));
      paths.push(path);
    }
    await writeTable({ namespace: NAMESPACE, table, ipc: paths });
  };
  const raw = () => new IcebergRaw({ source: icebergSource(), namespace: NAMESPACE, table });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'twg-iceberg-raw-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds nothing before the table exists', async () => {
    expect(await raw().held()).toEqual([]);
  });

  it('holds whole batches only, reads them back as written, and a split batch is held once its rest commits', async () => {
    const a = rawTableBatch(batch(0, 0, 10, range(0, 10)));
    const b = rawTableBatch(batch(0, 10, 25, [10, 12, 14, 20])); // offsets compacted away
    const c = rawTableBatch(batch(1, 0, 6, range(0, 6)));
    const empty = rawTableBatch(batch(1, 6, 9, [])); // a span with no records left
    const d = rawTableBatch(batch(0, 25, 30, range(25, 30)));
    // d's first three rows in this commit, its last two in the next
    await commit([a, b, c, empty, d.slice(0, 3)]);
    const reader = raw();
    expect(await reader.held()).toEqual([
      {
        partition: { topic: TOPIC, partition: 0 },
        spans: [{ topic: TOPIC, partition: 0, start: 0, end: 25 }],
      },
      {
        partition: { topic: TOPIC, partition: 1 },
        spans: [{ topic: TOPIC, partition: 1, start: 0, end: 9 }],
      },
    ]);
    expect(reader.visibility()).toMatchObject({ partialBatches: 1, files: 1, filesRead: 1 });
    // a window inside b comes with b whole (its span begins before the window)
    const read = await collect(reader, 0, 13, 40);
    expect(read.map((x) => [x.span.start, x.span.end, x.records.map((r) => r.offset)])).toEqual([
      [10, 25, [10, 12, 14, 20]],
    ]);
    const [first] = await collect(reader, 0, 0, 10);
    expect(first?.records).toEqual(range(0, 10).map(record));
    expect(await collect(reader, 1, 6, 9)).toEqual([
      { span: { topic: TOPIC, partition: 1, start: 6, end: 9 }, records: [] },
    ]);

    await commit([d.slice(3)]);
    expect((await reader.held())[0]?.spans).toEqual([
      { topic: TOPIC, partition: 0, start: 0, end: 30 },
    ]);
    // the first file's tally was kept: only the new file was read
    expect(reader.visibility()).toMatchObject({ partialBatches: 0, files: 2, filesRead: 1 });
    const tail = await collect(reader, 0, 25, 30);
    expect(tail.map((x) => x.records.map((r) => r.offset))).toEqual([range(25, 30)]);
  });

  it('a batch written twice, and a source re-read in other batches, read back each offset once', async () => {
    const again = rawTableBatch(batch(0, 25, 30, range(25, 30))); // a retried write
    const reread = rawTableBatch(batch(0, 27, 35, range(27, 35))); // batches cut elsewhere after a crash
    await commit([again, reread]);
    const reader = raw();
    expect((await reader.held())[0]?.spans).toEqual([
      { topic: TOPIC, partition: 0, start: 0, end: 35 },
    ]);
    const read = await collect(reader, 0, 25, 35);
    expect(read.map((x) => [x.span.start, x.span.end])).toEqual([
      [25, 30],
      [30, 35],
    ]);
    expect(read.flatMap((x) => x.records.map((r) => r.offset))).toEqual(range(25, 35));
  });

  it('reads the snapshot held() saw, not a newer one committed since', async () => {
    const reader = raw();
    const before = await reader.held();
    await commit([rawTableBatch(batch(0, 35, 40, range(35, 40)))]);
    expect(await collect(reader, 0, 35, 40)).toEqual([]);
    expect(await reader.held()).not.toEqual(before);
    expect((await collect(reader, 0, 35, 40)).length).toBe(1);
  });
});
