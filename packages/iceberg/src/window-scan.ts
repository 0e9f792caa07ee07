import type { RecordBatch } from 'apache-arrow';
import { decodeIntegerBound, mayOverlap } from './bounds.js';
import { IcebergError, invalidArgument } from './errors.js';
import type { FileStore } from './file-store.js';
import { readManifest, readManifestList, type DataFile, type ManifestFile } from './manifest.js';
import type { ManifestCache } from './manifest-cache.js';
import { readParquetBatches } from './parquet-data.js';
import { mergeRuns, windowRuns, type WindowRun } from './window-runs.js';
import type { LoadedTable, RestCatalog } from './rest-catalog.js';
import {
  findSnapshot,
  snapshotSchema,
  type IcebergField,
  type Snapshot,
} from './table-metadata.js';

/** Where a window scan reads from: the catalog for metadata, a store for the files. */
export interface IcebergSource {
  readonly catalog: RestCatalog;
  readonly files: FileStore;
  /** Keeps decoded manifests across scans (they never change); none by default. */
  readonly manifests?: ManifestCache;
}

/** One offset window of one partition of a raw table. */
export interface WindowRequest {
  readonly namespace: string | readonly string[];
  readonly table: string;
  /** The table's columns holding the source partition and the offset (each an Iceberg int or long). */
  readonly columns: { readonly partition: string; readonly offset: string };
  readonly partition: number | bigint;
  /** First offset of the window (inclusive). */
  readonly start: number | bigint;
  /** End of the window (exclusive). */
  readonly end: number | bigint;
  /** The snapshot to read; the current one by default. */
  readonly snapshotId?: bigint;
  /** The columns to return (the partition and offset columns are always read); all by default. */
  readonly select?: readonly string[];
}

/** A planned window read: which snapshot, which files, and the rows when iterated. */
export interface WindowScan {
  /** `ns.table`. */
  readonly table: string;
  /** The snapshot read: its id, commit time and summary tell a caller which positions it covers. */
  readonly snapshot: Snapshot;
  /** The data files whose bounds may hold rows of the window: the ones read. */
  readonly files: readonly DataFile[];
  /** How many live data files the bounds ruled out without reading them. */
  readonly prunedFiles: number;
  /**
   * The window's rows (partition == p, start <= offset < end), in offset
   * order, as zero-copy slices of the files' batches. Rows with the same
   * offset (a record written twice) all come, the older commit's first
   * (by data sequence number): dedup is the caller's. Each call reads the files again.
   */
  batches(): AsyncGenerator<RecordBatch>;
}

const FETCH_CONCURRENCY = 8;

function integerColumn(
  fields: readonly IcebergField[],
  name: string,
  table: string,
): IcebergField & { type: 'int' | 'long' } {
  const f = fields.find((x) => x.name === name);
  if (f === undefined) {
    throw new IcebergError(
      'TWG_ICEBERG_INVALID',
      table,
      `the table has no column ${JSON.stringify(name)}`,
    );
  }
  if (f.type !== 'int' && f.type !== 'long') {
    throw new IcebergError(
      'TWG_ICEBERG_UNSUPPORTED',
      table,
      `column ${name} is ${JSON.stringify(f.type)}: a window is read on int or long columns`,
    );
  }
  return f as IcebergField & { type: 'int' | 'long' };
}

function bigintArg(name: string, v: number | bigint): bigint {
  if (typeof v === 'number' && !Number.isSafeInteger(v))
    throw invalidArgument(name, `${v} is not a safe integer`);
  return BigInt(v);
}

/** Runs `fn` over `items` with at most `limit` in flight, results in input order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The live data files of `snapshot`: its manifest list, then each data
 * manifest (a delete manifest with a live entry is refused by
 * readManifest), older commits first (stable within one), so a row written
 * twice comes in commit order.
 */
export async function liveDataFiles(
  source: Pick<IcebergSource, 'files' | 'manifests'>,
  snapshot: Snapshot,
): Promise<DataFile[]> {
  const { files, manifests: cache } = source;
  const loadList = async (): Promise<ManifestFile[]> =>
    readManifestList(await files.read(snapshot.manifestList), snapshot.manifestList);
  const manifests = await (cache?.manifestList(snapshot.manifestList, loadList) ?? loadList());
  const live = (
    await mapLimited(manifests, FETCH_CONCURRENCY, (m) => {
      const load = async (): Promise<DataFile[]> =>
        readManifest(await files.read(m.path), m.path, m.sequenceNumber);
      return cache?.manifest(m.path, m.sequenceNumber, load) ?? load();
    })
  ).flat();
  return live.sort((a, b) =>
    a.sequenceNumber < b.sequenceNumber ? -1 : a.sequenceNumber > b.sequenceNumber ? 1 : 0,
  );
}

/**
 * Plans a window read of a loaded table: the snapshot's manifest list, each
 * data manifest (a delete manifest with a live entry is refused by
 * readManifest), then the data files whose offset bounds overlap
 * [start, end) and whose partition bounds hold p. A file without bounds for
 * a column is kept: pruning only ever skips a file that provably holds no
 * row of the window.
 */
export async function planWindow(
  source: Pick<IcebergSource, 'files' | 'manifests'>,
  loaded: LoadedTable,
  request: WindowRequest,
): Promise<WindowScan> {
  const start = bigintArg('start', request.start);
  const end = bigintArg('end', request.end);
  const p = bigintArg('partition', request.partition);
  if (end < start) throw invalidArgument('end', `${end} is before start ${start}`);
  const name = loaded.name;
  const snapshot = findSnapshot(loaded.metadata, name, request.snapshotId);
  const fields = snapshotSchema(loaded.metadata, snapshot).fields;
  const partitionField = integerColumn(fields, request.columns.partition, name);
  const offsetField = integerColumn(fields, request.columns.offset, name);
  const select =
    request.select === undefined
      ? undefined
      : [...new Set([request.columns.partition, request.columns.offset, ...request.select])];

  const { files } = source;
  const live = await liveDataFiles(source, snapshot);
  const bound = (
    map: ReadonlyMap<number, Uint8Array>,
    f: IcebergField & { type: 'int' | 'long' },
    path: string,
  ): bigint | undefined => {
    const b = map.get(f.id);
    return b === undefined
      ? undefined
      : decodeIntegerBound(b, f.type, `${path} (bound of ${f.name})`);
  };
  const kept = live.filter(
    (d) =>
      d.recordCount > 0 &&
      start < end &&
      mayOverlap(
        bound(d.lowerBounds, offsetField, d.path),
        bound(d.upperBounds, offsetField, d.path),
        start,
        end,
      ) &&
      mayOverlap(
        bound(d.lowerBounds, partitionField, d.path),
        bound(d.upperBounds, partitionField, d.path),
        p,
        p + 1n,
      ),
  );

  return {
    table: name,
    snapshot,
    files: kept,
    prunedFiles: live.length - kept.length,
    async *batches() {
      // each file is decoded and selected as soon as it arrives, while others are in flight;
      // only the window's runs (slices) are kept until the merge
      const perFile = await mapLimited(kept, FETCH_CONCURRENCY, async (d) => {
        const bytes = await files.read(d.path);
        return readParquetBatches(bytes, d.path, d.recordCount, select).flatMap((batch) =>
          windowRuns(batch, d.path, request.columns, p, start, end),
        );
      });
      const runs: WindowRun[] = perFile.flat();
      yield* mergeRuns(runs);
    },
  };
}

/** Loads the table from the catalog and plans the window on its current (or the given) snapshot. */
export async function scanWindow(
  source: IcebergSource,
  request: WindowRequest,
): Promise<WindowScan> {
  const loaded = await source.catalog.loadTable(request.namespace, request.table);
  return planWindow(source, loaded, request);
}
