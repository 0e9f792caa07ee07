import type { OffsetSpan } from '@thalweg/connector-core';
import { readIpcFileSegment, writeIpcFileSegment } from '@thalweg/stream-arrow';
import {
  AsyncByteQueue,
  RecordBatch,
  RecordBatchFileWriter,
  type Data,
  type Struct,
} from 'apache-arrow';
import { RawSinkError, reasonOf } from './errors.js';
import type { PackedBatch } from './packed-batch.js';
import {
  RAW_CLUSTER_METADATA,
  RAW_SPAN_METADATA,
  RawRows,
  envelopeData,
  rawSchema,
  spanFromJson,
} from './raw-envelope.js';

/** Schema metadata key of a segment's manifest. */
export const SEGMENT_MANIFEST_METADATA = 'twg.raw.segment';
const FORMAT = 'twg-raw-segment';
/**
 * The segment format version. 2: the envelope has no `_twg_record_id`
 * column (raw-envelope.ts). Version 1 never shipped; a segment of any
 * other version is refused, naming the file, rather than misread.
 */
export const SEGMENT_FORMAT_VERSION = 2;

/**
 * A segment on disk is one Arrow IPC file (stream-arrow's file segment: a
 * footer indexes the batches and a torn write fails to read) whose batches
 * are raw envelopes, one per source batch, in submission order. An IPC file
 * has one schema, so the per-batch span metadata of the envelopes moves into
 * one manifest in the file's schema metadata:
 *
 * `twg.raw.segment` = `{"format":"twg-raw-segment","version":2,"cluster":…,
 * "spans":[{topic, partition, start, end}, …]}`, span i for batch i. The
 * cluster is what the record ids of the segment's records are computed
 * with, and what keeps a directory to one cluster.
 */
export interface SegmentBatch {
  readonly span: OffsetSpan;
  /** An envelope batch (encodeRawBatch); its own schema metadata is not written. */
  readonly batch: RecordBatch;
}

export function encodeSegment(cluster: string, batches: readonly SegmentBatch[]): Uint8Array {
  return writeSegment(
    cluster,
    batches.map((b) => b.span),
    batches.map((b) => b.batch.data),
  );
}

/** The segment of packed batches as one buffer; the writers use `packedSegmentChunks`. */
export function encodePackedSegment(cluster: string, batches: readonly PackedBatch[]): Uint8Array {
  return Buffer.concat(packedSegmentChunks(cluster, batches).chunks);
}

/** A segment as the chunks the IPC writer produced, in file order. */
export interface SegmentChunks {
  readonly chunks: readonly Uint8Array[];
  readonly bytes: number;
}

/**
 * The segment of packed batches (what the writers hold) as the IPC file
 * writer's chunks: the same bytes as `encodeSegment`, but not joined. The
 * body chunks are views into the packed buffers (the envelopes are views
 * too), so nothing is copied before the write; the buffers must stay
 * untouched until the segment is written. Joining a segment (tens of MiB
 * under load) cost the writer a copy and the garbage collector a large
 * buffer per segment.
 */
export function packedSegmentChunks(
  cluster: string,
  batches: readonly PackedBatch[],
): SegmentChunks {
  const schema = manifestSchema(
    cluster,
    batches.map((b) => b.span),
  );
  const sink = new ChunkSink();
  const writer = new RecordBatchFileWriter();
  writer.reset(sink, schema);
  writer.writeAll(batches.map((b) => new RecordBatch(schema, envelopeData(b))));
  return { chunks: sink.chunks, bytes: sink.bytes };
}

/** Collects what the IPC writer writes, as it writes it (apache-arrow's sink type). */
class ChunkSink extends AsyncByteQueue {
  readonly chunks: Uint8Array[] = [];
  bytes = 0;

  override write(value: Parameters<AsyncByteQueue['write']>[0]): void {
    // The writer hands over Uint8Array views of what it writes.
    const chunk = value as Uint8Array;
    if (chunk.byteLength === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.byteLength;
  }
}

function manifestSchema(cluster: string, spans: readonly OffsetSpan[]) {
  const manifest = { format: FORMAT, version: SEGMENT_FORMAT_VERSION, cluster, spans };
  return rawSchema(new Map([[SEGMENT_MANIFEST_METADATA, JSON.stringify(manifest)]]));
}

function writeSegment(
  cluster: string,
  spans: readonly OffsetSpan[],
  data: readonly Data<Struct>[],
): Uint8Array {
  const schema = manifestSchema(cluster, spans);
  return writeIpcFileSegment(data.map((d) => new RecordBatch(schema, d)));
}

/** A batch read back from a segment, checked, with its span. */
export interface DecodedSegmentBatch {
  readonly span: OffsetSpan;
  /** The envelope batch, carrying its span and cluster as encodeRawBatch's do. */
  readonly batch: RecordBatch;
  readonly rows: RawRows;
}

export interface DecodedSegment {
  readonly cluster: string;
  readonly batches: readonly DecodedSegmentBatch[];
}

/**
 * Reads and checks a whole segment: the IPC file (magic, footer, every
 * buffer), the manifest and its version, the envelope schema, and that each
 * batch's offsets ascend inside its span. Any failure names `file`; nothing
 * is skipped.
 */
export function decodeSegment(bytes: Uint8Array, file: string): DecodedSegment {
  let batches: RecordBatch[];
  try {
    batches = readIpcFileSegment(bytes);
  } catch (cause) {
    throw new RawSinkError('TWG_RAW_SEGMENT_CORRUPT', reasonOf(cause), { file }, cause);
  }
  const manifestText = batches[0]?.schema.metadata.get(SEGMENT_MANIFEST_METADATA);
  if (manifestText === undefined) corrupt(file, `no ${SEGMENT_MANIFEST_METADATA} manifest`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestText);
  } catch (cause) {
    return corrupt(file, `the manifest is not JSON: ${reasonOf(cause)}`);
  }
  const m = manifest as { format?: unknown; version?: unknown; cluster?: unknown; spans?: unknown };
  if (m.format !== FORMAT) corrupt(file, `manifest format ${String(m.format)} is not ${FORMAT}`);
  if (m.version !== SEGMENT_FORMAT_VERSION) {
    throw new RawSinkError(
      'TWG_RAW_SEGMENT_VERSION',
      `is ${FORMAT} version ${String(m.version)}; this sink reads version ` +
        `${SEGMENT_FORMAT_VERSION} only (move the directory aside, or read it with the release ` +
        'that wrote it)',
      { file },
    );
  }
  if (typeof m.cluster !== 'string' || !Array.isArray(m.spans)) {
    corrupt(file, 'manifest lacks cluster or spans');
  }
  const spans = m.spans as unknown[];
  if (spans.length !== batches.length) {
    corrupt(file, `manifest lists ${spans.length} spans for ${batches.length} batches`);
  }
  const cluster = m.cluster;
  return {
    cluster,
    batches: batches.map((stored, i) => {
      const span = spanFromJson(spans[i], file, `manifest span ${i}`);
      const rows = RawRows.of(stored, file);
      if (
        rows.length > 0 &&
        (rows.offset(0) < span.start || rows.offset(rows.length - 1) >= span.end)
      ) {
        corrupt(file, `batch ${i} holds offsets outside its span [${span.start}, ${span.end})`);
      }
      const schema = rawSchema(
        new Map([
          [RAW_SPAN_METADATA, JSON.stringify(span)],
          [RAW_CLUSTER_METADATA, cluster],
        ]),
      );
      return { span, batch: new RecordBatch(schema, stored.data), rows };
    }),
  };
}

function corrupt(file: string, reason: string): never {
  throw new RawSinkError('TWG_RAW_SEGMENT_CORRUPT', reason, { file });
}
