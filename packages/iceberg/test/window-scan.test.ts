import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tableFromArrays, tableToIPC, type RecordBatch } from 'apache-arrow';
import {
  Compression,
  Table as WasmTable,
  WriterPropertiesBuilder,
  writeParquet,
} from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fileStoreByScheme,
  localFileStore,
  parseTableMetadata,
  planWindow,
  type LoadedTable,
  type WindowRequest,
} from '../src/index.js';
import { entry, le4, manifest, manifestList } from './support/manifest-bytes.js';

// A table on local disk, built without a catalog: zstd Parquet files written
// by parquet-wasm, manifests and a manifest list built by hand, the metadata
// parsed from JSON. The window scan is planned on it through file: URLs.
let dir: string;
const url = (name: string): string => pathToFileURL(join(dir, name)).href;

function parquet(p: number[], o: number[]): Uint8Array {
  const ipc = tableToIPC(
    tableFromArrays({
      partition: Int32Array.from(p),
      offset: BigInt64Array.from(o.map(BigInt)),
      value: o.map((x) => `v${x}`),
    }),
    'stream',
  );
  const props = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).build();
  return writeParquet(WasmTable.fromIPCStream(ipc), props);
}

function table(manifestListName: string): LoadedTable {
  const metadata = parseTableMetadata(
    {
      'format-version': 2,
      location: url(''),
      'current-schema-id': 0,
      schemas: [
        {
          'schema-id': 0,
          fields: [
            { id: 1, name: 'partition', required: true, type: 'int' },
            { id: 2, name: 'offset', required: true, type: 'long' },
            { id: 3, name: 'value', required: false, type: 'string' },
          ],
        },
      ],
      'current-snapshot-id': '1',
      snapshots: [
        {
          'snapshot-id': '1',
          'timestamp-ms': 5,
          'manifest-list': url(manifestListName),
          summary: { operation: 'append' },
        },
      ],
    },
    'local.raw',
  );
  return { name: 'local.raw', metadataLocation: undefined, metadata, config: {} };
}

const request = (p: number, start: number, end: number): WindowRequest => ({
  namespace: 'local',
  table: 'raw',
  columns: { partition: 'partition', offset: 'offset' },
  partition: p,
  start,
  end,
});

async function offsets(
  loaded: LoadedTable,
  r: WindowRequest,
): Promise<{ offsets: number[]; read: number; pruned: number }> {
  const scan = await planWindow({ files: fileStoreByScheme({}) }, loaded, r);
  const out: RecordBatch[] = [];
  for await (const b of scan.batches()) out.push(b);
  return {
    offsets: out.flatMap((b) =>
      [...(b.getChild('offset')?.toArray() as BigInt64Array)].map(Number),
    ),
    read: scan.files.length,
    pruned: scan.prunedFiles,
  };
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);
const bounds = (p0: number, p1: number, o0: bigint, o1: bigint) => ({
  lower: new Map([[1, le4(p0)]]),
  upper: new Map([[1, le4(p1)]]),
  lo: o0,
  hi: o1,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'iceberg-local-'));
  // a.parquet: partition 0, offsets 0..49; b.parquet: partition 0, 50..99; c.parquet: partition 1, 0..49
  await writeFile(
    join(dir, 'a.parquet'),
    parquet(
      range(0, 50).map(() => 0),
      range(0, 50),
    ),
  );
  await writeFile(
    join(dir, 'b.parquet'),
    parquet(
      range(0, 50).map(() => 0),
      range(50, 100),
    ),
  );
  await writeFile(
    join(dir, 'c.parquet'),
    parquet(
      range(0, 50).map(() => 1),
      range(0, 50),
    ),
  );
  await writeFile(
    join(dir, 'm1.avro'),
    manifest([
      entry({ status: 1, path: url('a.parquet'), rows: 50, ...bounds(0, 0, 0n, 49n) }),
      entry({ status: 1, path: url('b.parquet'), rows: 50, ...bounds(0, 0, 50n, 99n) }),
      entry({ status: 1, path: url('c.parquet'), rows: 50, ...bounds(1, 1, 0n, 49n) }),
    ]),
  );
  await writeFile(join(dir, 'list.avro'), manifestList([{ path: url('m1.avro') }]));
  // a delete manifest with one live positional delete file
  await writeFile(
    join(dir, 'm2.avro'),
    manifest([entry({ status: 1, content: 1, path: url('del.parquet'), rows: 3 })]),
  );
  await writeFile(
    join(dir, 'list-deletes.avro'),
    manifestList([{ path: url('m1.avro') }, { path: url('m2.avro'), content: 1 }]),
  );
  // a manifest whose record_count is more than the file holds
  await writeFile(
    join(dir, 'm3.avro'),
    manifest([entry({ status: 1, path: url('a.parquet'), rows: 51 })]),
  );
  await writeFile(join(dir, 'list-short.avro'), manifestList([{ path: url('m3.avro') }]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('planWindow on local files', () => {
  it('reads only the files whose bounds may hold the window, and the window rows in order', async () => {
    expect(await offsets(table('list.avro'), request(0, 45, 55))).toEqual({
      offsets: range(45, 55),
      read: 2,
      pruned: 1,
    });
    expect(await offsets(table('list.avro'), request(0, 60, 70))).toEqual({
      offsets: range(60, 70),
      read: 1,
      pruned: 2,
    });
    expect(await offsets(table('list.avro'), request(1, 0, 1000))).toEqual({
      offsets: range(0, 50),
      read: 1,
      pruned: 2,
    });
    expect(await offsets(table('list.avro'), request(2, 0, 1000))).toEqual({
      offsets: [],
      read: 0,
      pruned: 3,
    });
  });

  it('refuses a snapshot with a live delete file, naming the file', async () => {
    await expect(
      planWindow({ files: localFileStore() }, table('list-deletes.avro'), request(0, 0, 10)),
    ).rejects.toThrow(`TWG_ICEBERG_UNSUPPORTED: ${url('del.parquet')}: a positional delete file`);
  });

  it('refuses a data file holding fewer rows than its manifest entry says', async () => {
    const scan = await planWindow(
      { files: localFileStore() },
      table('list-short.avro'),
      request(0, 0, 10),
    );
    await expect(scan.batches().next()).rejects.toThrow(
      `TWG_ICEBERG_PARQUET_CORRUPT: ${url('a.parquet')}: holds 50 rows, its manifest entry says 51`,
    );
  });

  it('a missing file is named, and an unknown scheme is refused', async () => {
    await expect(
      planWindow({ files: localFileStore() }, table('nope.avro'), request(0, 0, 10)),
    ).rejects.toMatchObject({
      code: 'TWG_ICEBERG_FILE_UNREADABLE',
      subject: url('nope.avro'),
      canRetry: true,
    });
    await expect(fileStoreByScheme({}).read('gs://bucket/key')).rejects.toThrow(
      'gs://bucket/key: no store for this scheme',
    );
    await expect(fileStoreByScheme({}).read('s3://bucket/key')).rejects.toThrow(
      'no S3 store was given',
    );
  });

  it('refuses a window whose end is before its start', async () => {
    await expect(
      planWindow({ files: localFileStore() }, table('list.avro'), request(0, 10, 5)),
    ).rejects.toThrow('TWG_ICEBERG_INVALID: end: 5 is before start 10');
  });
});
