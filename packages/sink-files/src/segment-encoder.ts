import type { OffsetSpan } from '@thalweg/connector-core';
import {
  AsyncByteQueue,
  RecordBatch,
  RecordBatchFileWriter,
  type Data,
  type Schema,
  type Struct,
} from 'apache-arrow';
import { checksumHex, checksumOf } from './checksum.js';
import type { PackedBatch } from './packed-batch.js';
import { envelopeData, rawSchema } from './raw-envelope.js';
import { layoutOfChunks, type BatchLayout, type SegmentLayout } from './segment-layout.js';

/** Schema metadata key of a segment's manifest. */
export const SEGMENT_MANIFEST_METADATA = 'twg.raw.segment';
/** The manifest's `format`. */
export const SEGMENT_FORMAT = 'twg-raw-segment';
/**
 * The segment format version. 3: the manifest carries each batch's CRC32C
 * (ADR 0014). 2: the envelope has no `_twg_record_id` column
 * (raw-envelope.ts). A segment of any other version is refused, naming the
 * file, rather than misread.
 */
export const SEGMENT_FORMAT_VERSION = 3;

/**
 * A segment on disk is one Arrow IPC file (stream-arrow's file segment: a
 * footer indexes the batches and a torn write fails to read) whose batches
 * are raw envelopes, one per source batch, in submission order. An IPC file
 * has one schema, so the per-batch span metadata of the envelopes moves into
 * one manifest in the file's schema metadata:
 *
 * `twg.raw.segment` = `{"format":"twg-raw-segment","version":3,"cluster":…,
 * "spans":[{topic, partition, start, end}, …],"crc32c":["8 hex digits", …]}`,
 * span i and checksum i for batch i. The checksum covers batch i's whole IPC
 * message (metadata and body) as it lies in the file, so a segment proves
 * its own batches; the directory manifest (raw-manifest.ts) also holds the
 * checksums of the bytes around them (segment-layout.ts). The cluster is
 * what the record ids of the segment's records are computed with, and what
 * keeps a directory to one cluster.
 */
export interface SegmentBatch {
  readonly span: OffsetSpan;
  /** An envelope batch (encodeRawBatch); its own schema metadata is not written. */
  readonly batch: RecordBatch;
}

export function encodeSegment(cluster: string, batches: readonly SegmentBatch[]): Uint8Array {
  return Buffer.concat(
    segmentChunks(
      cluster,
      batches.map((b) => b.span),
      batches.map((b) => b.batch.data),
      true,
    ).chunks,
  );
}

/** The segment of packed batches as one buffer; the writers use `packedSegmentChunks`. */
export function encodePackedSegment(cluster: string, batches: readonly PackedBatch[]): Uint8Array {
  return Buffer.concat(packedSegmentChunks(cluster, batches).chunks);
}

/** A segment as the chunks the IPC writer produced, in file order, and its layout. */
export interface SegmentChunks {
  readonly chunks: readonly Uint8Array[];
  readonly bytes: number;
  readonly layout: SegmentLayout;
}

/**
 * The segment of packed batches (what the writers hold) as the IPC file
 * writer's chunks: the same bytes as `encodeSegment`, but not joined. The
 * body chunks are views into the packed buffers (the envelopes are views
 * too), so nothing is copied before the write; the buffers must stay
 * untouched until the segment is written. Joining a segment (tens of MiB
 * under load) cost the writer a copy and the garbage collector a large
 * buffer per segment.
 *
 * `checksums: false` is for the benchmark's unchecked baseline only: the
 * checksums are written as 0 and the segment fails every verified read.
 */
export function packedSegmentChunks(
  cluster: string,
  batches: readonly PackedBatch[],
  checksums = true,
): SegmentChunks {
  return segmentChunks(
    cluster,
    batches.map((b) => b.span),
    batches.map((b) => envelopeData(b)),
    checksums,
  );
}

function segmentChunks(
  cluster: string,
  spans: readonly OffsetSpan[],
  data: readonly Data<Struct>[],
  checksums: boolean,
): SegmentChunks {
  const encoder = new SegmentEncoder(cluster, checksums);
  data.forEach((d, i) => encoder.add(spans[i] as OffsetSpan, d));
  return encoder.finish();
}

/**
 * One segment, a batch at a time. An Arrow IPC file writer puts the schema
 * (and so the manifest) only in the footer, written by `finish`, after
 * every batch: the batch messages are written and checksummed as they are
 * added, then the checksums are set into the schema's manifest, and the
 * footer carries them. (apache-arrow reads the schema's metadata map when it
 * encodes the footer; the codec round-trip tests fail if that ever changes.)
 */
export class SegmentEncoder {
  private readonly metadata = new Map<string, string>();
  private readonly schema: Schema = rawSchema(this.metadata);
  private readonly sink = new ChunkSink();
  private readonly writer = new RecordBatchFileWriter();
  private readonly spans: OffsetSpan[] = [];
  private readonly batches: BatchLayout[] = [];

  constructor(
    private readonly cluster: string,
    private readonly checksums: boolean,
  ) {
    this.writer.reset(this.sink, this.schema);
  }

  /** The chunks encoded so far, in file order (the array grows as batches are added). */
  get chunks(): readonly Uint8Array[] {
    return this.sink.chunks;
  }

  /** Bytes encoded so far. */
  get bytes(): number {
    return this.sink.bytes;
  }

  add(span: OffsetSpan, data: Data<Struct>): void {
    const sink = this.sink;
    const at = sink.bytes;
    const first = sink.chunks.length;
    this.writer.write(new RecordBatch(this.schema, data));
    let crc = 0;
    if (this.checksums) {
      for (let c = first; c < sink.chunks.length; c++) {
        crc = checksumOf(sink.chunks[c] as Uint8Array, crc);
      }
    }
    this.spans.push(span);
    this.batches.push({ at, length: sink.bytes - at, crc });
  }

  finish(): SegmentChunks {
    const { sink, batches } = this;
    this.metadata.set(
      SEGMENT_MANIFEST_METADATA,
      manifestText(
        this.cluster,
        this.spans,
        batches.map((b) => b.crc),
      ),
    );
    this.writer.finish();
    const layout = this.checksums
      ? layoutOfChunks(sink.chunks, sink.bytes, batches)
      : { bytes: sink.bytes, head: 0, tail: 0, batches };
    return { chunks: sink.chunks, bytes: sink.bytes, layout };
  }
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

function manifestText(cluster: string, spans: readonly OffsetSpan[], crcs: readonly number[]) {
  return JSON.stringify({
    format: SEGMENT_FORMAT,
    version: SEGMENT_FORMAT_VERSION,
    cluster,
    spans,
    crc32c: crcs.map(checksumHex),
  });
}
