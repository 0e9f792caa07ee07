import { readAvroContainer } from './avro-container.js';
import type { AvroValue } from './avro-schema.js';
import { IcebergError } from './errors.js';

/**
 * Iceberg's manifest list and manifests (the spec's "Manifests" and
 * "Manifest Lists"): Avro files naming, per snapshot, every data file with
 * its row count and per-column bounds. Only what the scan needs is kept.
 * Delete files are refused where they are found, naming the file: raw is
 * append-only, and a reader that skipped a delete would replay rows the
 * table no longer holds.
 */

/** One manifest a snapshot's manifest list names. */
export interface ManifestFile {
  readonly path: string;
  /** 0: data files; 1: delete files (v2). */
  readonly content: number;
  readonly partitionSpecId: number;
  /** The sequence number of the commit that added the manifest (0 in v1): its new files inherit it. */
  readonly sequenceNumber: bigint;
}

/** A live data file of a snapshot. */
export interface DataFile {
  readonly path: string;
  readonly recordCount: number;
  readonly fileSizeInBytes: number;
  /** The data sequence number: which commit wrote the rows (0 in v1). A scan orders equal offsets by it. */
  readonly sequenceNumber: bigint;
  /** Lower bound per field id, in Iceberg's single-value binary serialization. */
  readonly lowerBounds: ReadonlyMap<number, Uint8Array>;
  readonly upperBounds: ReadonlyMap<number, Uint8Array>;
}

type Row = { readonly [field: string]: AvroValue };

function record(v: AvroValue, file: string, what: string): Row {
  if (
    v === null ||
    typeof v !== 'object' ||
    v instanceof Uint8Array ||
    Array.isArray(v) ||
    v instanceof Map
  ) {
    throw new IcebergError('TWG_ICEBERG_AVRO_CORRUPT', file, `${what} is not a record`);
  }
  return v as Row;
}

function str(r: Row, key: string, file: string): string {
  const v = r[key];
  if (typeof v !== 'string')
    throw new IcebergError('TWG_ICEBERG_AVRO_CORRUPT', file, `${key} is not a string`);
  return v;
}

/** An int or long field as a number (counts and sizes: safe far beyond any real file). */
function num(r: Row, key: string, file: string, fallback?: number): number {
  const v = r[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new IcebergError('TWG_ICEBERG_AVRO_CORRUPT', file, `${key} is not a number`);
}

/** A `map<int, binary>`: Avro writes it as an array of key/value records (or, rarely, a string-keyed map). */
function bounds(v: AvroValue | undefined, file: string, key: string): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  if (v === null || v === undefined) return out;
  const entries: [unknown, unknown][] = Array.isArray(v)
    ? (v as Row[]).map((e) => [e['key'], e['value']])
    : v instanceof Map
      ? [...(v as Map<string, AvroValue>)].map(([k, x]) => [Number(k), x])
      : [];
  for (const [k, x] of entries) {
    if (typeof k !== 'number' || !(x instanceof Uint8Array)) {
      throw new IcebergError(
        'TWG_ICEBERG_AVRO_CORRUPT',
        file,
        `${key} is not a map of field id to bytes`,
      );
    }
    out.set(k, x);
  }
  return out;
}

/** The manifests a manifest list names. */
export function readManifestList(bytes: Uint8Array, file: string): ManifestFile[] {
  return readAvroContainer(bytes, file).records.map((v) => {
    const r = record(v, file, 'a manifest list entry');
    return {
      path: str(r, 'manifest_path', file),
      content: num(r, 'content', file, 0), // v1 lists have no content: all data
      partitionSpecId: num(r, 'partition_spec_id', file, 0),
      sequenceNumber: typeof r['sequence_number'] === 'bigint' ? r['sequence_number'] : 0n,
    };
  });
}

const DELETED = 2;

/**
 * The live data files of one manifest (status EXISTING or ADDED; DELETED
 * entries record a removal and are skipped). Refuses, naming the file: a
 * delete file (content 1 or 2), and a data file in any format but Parquet.
 * `inherited` is the manifest's sequence number, which an entry without its
 * own (a null sequence_number, as v2 writers leave ADDED entries) takes.
 */
export function readManifest(bytes: Uint8Array, file: string, inherited = 0n): DataFile[] {
  const out: DataFile[] = [];
  for (const v of readAvroContainer(bytes, file).records) {
    const entry = record(v, file, 'a manifest entry');
    if (num(entry, 'status', file) === DELETED) continue;
    const d = record(entry['data_file'] ?? null, file, 'data_file');
    const path = str(d, 'file_path', file);
    const content = num(d, 'content', file, 0);
    if (content !== 0) {
      const kind = content === 1 ? 'positional' : content === 2 ? 'equality' : `content ${content}`;
      throw new IcebergError(
        'TWG_ICEBERG_UNSUPPORTED',
        path,
        `a ${kind} delete file (in ${file}): raw is append-only, and rows it deletes would be replayed`,
      );
    }
    const format = str(d, 'file_format', file);
    if (format.toUpperCase() !== 'PARQUET') {
      throw new IcebergError(
        'TWG_ICEBERG_UNSUPPORTED',
        path,
        `file_format ${format} (only PARQUET is read)`,
      );
    }
    out.push({
      path,
      recordCount: num(d, 'record_count', file),
      fileSizeInBytes: num(d, 'file_size_in_bytes', file),
      sequenceNumber:
        typeof entry['sequence_number'] === 'bigint' ? entry['sequence_number'] : inherited,
      lowerBounds: bounds(d['lower_bounds'], file, 'lower_bounds'),
      upperBounds: bounds(d['upper_bounds'], file, 'upper_bounds'),
    });
  }
  return out;
}
