import type { OffsetSpan } from '@thalweg/connector-core';
import {
  RAW_CLUSTER_METADATA,
  RAW_SPAN_METADATA,
  RawRows,
  RawSinkError,
  checksumHex,
  checksumOf,
  envelopeData,
  rawSchema,
  spanFromJson,
  type DecodedSegment,
  type PackedBatch,
  type SegmentChunks,
  type SegmentFormat,
  type SegmentLayout,
} from '@thalweg/sink-files';
import { RecordBatch, RecordBatchStreamWriter, tableFromIPC } from 'apache-arrow';
import {
  Compression,
  Table as WasmTable,
  WriterPropertiesBuilder,
  readParquet,
  writeParquet,
} from 'parquet-wasm';

/** Parquet key-value metadata key of a file's manifest. */
export const PARQUET_MANIFEST_METADATA = 'twg.raw.parquet';
const FORMAT = 'twg-raw-parquet';
/** The file format version; a file of another version is refused, naming it, rather than misread. */
export const PARQUET_FORMAT_VERSION = 1;

/**
 * Raw batches as one zstd Parquet file per group commit, written with
 * parquet-wasm (ADR 0034). The columns are the raw envelope's
 * (raw-envelope.ts in @thalweg/sink-files: offset, timestamp, key, value,
 * headers), so any Parquet reader sees what the source delivered; the
 * Arrow schema travels in the file, so it reads back with the same types.
 *
 * The file has one row group, the batches' rows one after another in
 * submission order, and a manifest in its key-value metadata:
 * `twg.raw.parquet` = `{"format":"twg-raw-parquet","version":1,
 * "cluster":…,"spans":[{topic, partition, start, end}, …],"records":[n, …]}`,
 * batch i being the next `records[i]` rows and accounting for `spans[i]`.
 *
 * The checksum is the CRC32C of the whole file, as the directory manifest
 * (raw.manifest) records it before anything the file holds is confirmed; it
 * sits in the layout's `head` (the file is one region: no batch has its own
 * byte range in a compressed column chunk). A read checks it before
 * anything parses the bytes.
 */
export const PARQUET_FILES: SegmentFormat = Object.freeze({
  kind: 'parquet-files',
  extension: 'parquet',
  encode: encodeParquetSegment,
  decode: decodeParquetSegment,
});

/** The Parquet file of packed batches (what the raw writer holds), with its layout. */
export function encodeParquetSegment(
  cluster: string,
  batches: readonly PackedBatch[],
  checksums = true,
): SegmentChunks {
  const records = batches.map((b) => b.count);
  const rows = records.reduce((n, r) => n + r, 0);
  const ipc = RecordBatchStreamWriter.writeAll(
    batches.map((b) => new RecordBatch(rawSchema(), envelopeData(b))),
  ).toUint8Array(true);
  const manifest = JSON.stringify({
    format: FORMAT,
    version: PARQUET_FORMAT_VERSION,
    cluster,
    spans: batches.map((b) => b.span),
    records,
  });
  // Built per file: writeParquet takes ownership of the properties (the
  // wasm side frees them), so a reused object silently writes uncompressed.
  const properties = new WriterPropertiesBuilder()
    .setCompression(Compression.ZSTD)
    .setMaxRowGroupSize(Math.max(1, rows))
    .setKeyValueMetadata(new Map([[PARQUET_MANIFEST_METADATA, manifest]]))
    .build();
  const file = writeParquet(WasmTable.fromIPCStream(ipc), properties);
  const bytes = file.byteLength;
  const layout: SegmentLayout = {
    bytes,
    head: checksums ? checksumOf(file) : 0,
    tail: 0,
    batches: batches.map(() => ({ at: bytes, length: 0, crc: 0 })),
  };
  return { chunks: [file], bytes, layout };
}

/**
 * Reads a Parquet raw file back: its size and CRC32C against what the
 * directory manifest recorded (TWG_RAW_SEGMENT_MISSING when shorter,
 * TWG_RAW_CHECKSUM_MISMATCH otherwise, naming the file and the offsets it
 * held), then the file's own manifest against the expected spans, then each
 * batch's rows as a raw envelope (offsets ascending inside the batch).
 */
export function decodeParquetSegment(
  bytes: Uint8Array,
  file: string,
  expected: { readonly layout: SegmentLayout; readonly spans: readonly OffsetSpan[] },
): DecodedSegment {
  const { layout, spans } = expected;
  if (bytes.byteLength !== layout.bytes) {
    throw new RawSinkError(
      bytes.byteLength < layout.bytes ? 'TWG_RAW_SEGMENT_MISSING' : 'TWG_RAW_CHECKSUM_MISMATCH',
      `is ${bytes.byteLength} bytes, ${layout.bytes} were made durable`,
      { file, position: Math.min(bytes.byteLength, layout.bytes), spans },
    );
  }
  const crc = checksumOf(bytes);
  if (crc !== layout.head) {
    throw new RawSinkError(
      'TWG_RAW_CHECKSUM_MISMATCH',
      `the Parquet file fails its checksum: crc32c ${checksumHex(crc)}, ${checksumHex(layout.head)} was written`,
      { file, position: 0, spans },
    );
  }
  let table;
  try {
    table = tableFromIPC(readParquet(bytes, { batchSize: 1 << 30 }).intoIPCStream());
  } catch (error) {
    return corrupt(file, `is not a readable Parquet file: ${String(error)}`);
  }
  const manifest = parseManifest(table.schema.metadata.get(PARQUET_MANIFEST_METADATA), file);
  if (
    manifest.spans.length !== spans.length ||
    manifest.spans.some((s, i) => !sameSpan(s, spans[i]))
  ) {
    corrupt(file, 'its manifest lists other batches than the directory manifest recorded');
  }
  const total = manifest.records.reduce((n, r) => n + r, 0);
  if (table.numRows !== total || table.batches.length > 1) {
    corrupt(
      file,
      `holds ${table.numRows} rows in ${table.batches.length} batches, ${total} rows in one were written`,
    );
  }
  const all = table.batches[0];
  let at = 0;
  const batches = manifest.spans.map((span, i) => {
    const n = manifest.records[i] ?? 0;
    const metadata = new Map([
      [RAW_SPAN_METADATA, JSON.stringify(span)],
      [RAW_CLUSTER_METADATA, manifest.cluster],
    ]);
    const data = all === undefined ? new RecordBatch(rawSchema()).data : all.slice(at, at + n).data;
    at += n;
    const batch = new RecordBatch(rawSchema(metadata), data);
    const rows = RawRows.of(batch, file);
    if (n > 0 && (rows.offset(0) < span.start || rows.offset(n - 1) >= span.end)) {
      corrupt(file, `batch ${i} holds an offset outside its span`);
    }
    return { span, batch, rows };
  });
  return { cluster: manifest.cluster, batches };
}

interface ParquetManifest {
  readonly cluster: string;
  readonly spans: readonly OffsetSpan[];
  readonly records: readonly number[];
}

function parseManifest(text: string | undefined, file: string): ParquetManifest {
  if (text === undefined) return corrupt(file, `has no ${PARQUET_MANIFEST_METADATA} metadata`);
  let m: {
    format?: unknown;
    version?: unknown;
    cluster?: unknown;
    spans?: unknown;
    records?: unknown;
  };
  try {
    m = JSON.parse(text) as typeof m;
  } catch (error) {
    return corrupt(file, `${PARQUET_MANIFEST_METADATA} is not JSON: ${String(error)}`);
  }
  if (m.format !== FORMAT || m.version !== PARQUET_FORMAT_VERSION) {
    corrupt(file, `is not a ${FORMAT} version ${PARQUET_FORMAT_VERSION} file`);
  }
  if (
    typeof m.cluster !== 'string' ||
    !Array.isArray(m.spans) ||
    !Array.isArray(m.records) ||
    m.spans.length !== m.records.length ||
    !m.records.every((r) => Number.isSafeInteger(r) && (r as number) >= 0)
  ) {
    corrupt(file, `${PARQUET_MANIFEST_METADATA} is not {cluster, spans, records}`);
  }
  return {
    cluster: m.cluster,
    spans: (m.spans as unknown[]).map((s) => spanFromJson(s, file, PARQUET_MANIFEST_METADATA)),
    records: m.records as number[],
  };
}

function sameSpan(a: OffsetSpan, b: OffsetSpan | undefined): boolean {
  return (
    b !== undefined &&
    a.topic === b.topic &&
    a.partition === b.partition &&
    a.start === b.start &&
    a.end === b.end
  );
}

function corrupt(file: string, reason: string): never {
  throw new RawSinkError('TWG_RAW_SEGMENT_CORRUPT', reason, { file });
}
