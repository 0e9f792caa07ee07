import type { OffsetSpan } from '@thalweg/connector-core';
import {
  ArrowBatchError,
  readIpcFileSegmentBlocks,
  type IpcFileBlock,
} from '@thalweg/stream-arrow';
import {
  AsyncByteQueue,
  RecordBatch,
  RecordBatchFileWriter,
  type Data,
  type Struct,
} from 'apache-arrow';
import { checksumHex, checksumOf } from './checksum.js';
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
import {
  layoutOfChunks,
  verifyLayout,
  type BatchLayout,
  type SegmentLayout,
} from './segment-layout.js';

/** Schema metadata key of a segment's manifest. */
export const SEGMENT_MANIFEST_METADATA = 'twg.raw.segment';
const FORMAT = 'twg-raw-segment';
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

/**
 * One pass. An Arrow IPC file writer puts the schema (and so the manifest)
 * only in the footer, written by `finish`, after every batch: the batch
 * messages are written and checksummed first, then the checksums are set
 * into the schema's manifest, and the footer carries them. (apache-arrow
 * reads the schema's metadata map when it encodes the footer; the codec
 * round-trip tests fail if that ever changes.)
 */
function segmentChunks(
  cluster: string,
  spans: readonly OffsetSpan[],
  data: readonly Data<Struct>[],
  checksums: boolean,
): SegmentChunks {
  const metadata = new Map<string, string>();
  const schema = rawSchema(metadata);
  const sink = new ChunkSink();
  const writer = new RecordBatchFileWriter();
  writer.reset(sink, schema);
  const batches: BatchLayout[] = [];
  for (const d of data) {
    const at = sink.bytes;
    const first = sink.chunks.length;
    writer.write(new RecordBatch(schema, d));
    let crc = 0;
    if (checksums) {
      for (let c = first; c < sink.chunks.length; c++) {
        crc = checksumOf(sink.chunks[c] as Uint8Array, crc);
      }
    }
    batches.push({ at, length: sink.bytes - at, crc });
  }
  metadata.set(
    SEGMENT_MANIFEST_METADATA,
    manifestText(
      cluster,
      spans,
      batches.map((b) => b.crc),
    ),
  );
  writer.finish();
  const layout = checksums
    ? layoutOfChunks(sink.chunks, sink.bytes, batches)
    : { bytes: sink.bytes, head: 0, tail: 0, batches };
  return { chunks: sink.chunks, bytes: sink.bytes, layout };
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
    format: FORMAT,
    version: SEGMENT_FORMAT_VERSION,
    cluster,
    spans,
    crc32c: crcs.map(checksumHex),
  });
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
 * Reads and checks a whole segment. With `expected` (the layout the
 * directory manifest recorded when the segment was made durable) every byte
 * is checked against its checksum before anything parses it
 * (segment-layout.ts); without it (a segment on its own) the IPC structure
 * is checked first and then each batch against the checksum its manifest
 * lists. Then the manifest and its version, the envelope schema, and that
 * each batch's offsets ascend inside its span. Any failure names `file` (and
 * where known the byte position and the offset range); nothing is skipped.
 */
export function decodeSegment(
  bytes: Uint8Array,
  file: string,
  expected?: { readonly layout: SegmentLayout; readonly spans: readonly OffsetSpan[] },
): DecodedSegment {
  if (expected !== undefined) verifyLayout(bytes, expected.layout, expected.spans, file);
  let batches: RecordBatch[];
  let blocks: IpcFileBlock[];
  try {
    ({ batches, blocks } = readIpcFileSegmentBlocks(bytes));
  } catch (cause) {
    const position = cause instanceof ArrowBatchError ? cause.offset : undefined;
    throw new RawSinkError(
      'TWG_RAW_SEGMENT_CORRUPT',
      reasonOf(cause),
      { file, ...(position === undefined ? {} : { position }), spans: expected?.spans ?? [] },
      cause,
    );
  }
  const manifestText = batches[0]?.schema.metadata.get(SEGMENT_MANIFEST_METADATA);
  if (manifestText === undefined) corrupt(file, `no ${SEGMENT_MANIFEST_METADATA} manifest`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestText);
  } catch (cause) {
    return corrupt(file, `the manifest is not JSON: ${reasonOf(cause)}`);
  }
  const m = manifest as {
    format?: unknown;
    version?: unknown;
    cluster?: unknown;
    spans?: unknown;
    crc32c?: unknown;
  };
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
  if (typeof m.cluster !== 'string' || !Array.isArray(m.spans) || !Array.isArray(m.crc32c)) {
    corrupt(file, 'manifest lacks cluster, spans or crc32c');
  }
  const spans = m.spans as unknown[];
  if (spans.length !== batches.length || m.crc32c.length !== batches.length) {
    corrupt(
      file,
      `manifest lists ${spans.length} spans and ${m.crc32c.length} checksums for ` +
        `${batches.length} batches`,
    );
  }
  const checked = spans.map((span, i) => spanFromJson(span, file, `manifest span ${i}`));
  checkBatchChecksums(bytes, blocks, m.crc32c as unknown[], checked, file, expected?.layout);
  const cluster = m.cluster;
  return {
    cluster,
    batches: batches.map((stored, i) => {
      const span = checked[i] as OffsetSpan;
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

/**
 * The segment's own checksums against its batches. When the bytes were
 * already checked against the layout the directory manifest recorded, it
 * is enough that the file's footer and manifest agree with that layout;
 * otherwise each batch message is hashed.
 */
function checkBatchChecksums(
  bytes: Uint8Array,
  blocks: readonly IpcFileBlock[],
  listed: readonly unknown[],
  spans: readonly OffsetSpan[],
  file: string,
  verified: SegmentLayout | undefined,
): void {
  blocks.forEach((block, i) => {
    const written = listed[i];
    const span = spans[i] as OffsetSpan;
    if (typeof written !== 'string' || !/^[0-9a-f]{8}$/.test(written)) {
      corrupt(file, `manifest checksum ${i} is not 8 hex digits`);
    }
    const known = verified?.batches[i];
    if (known !== undefined) {
      if (
        known.at !== block.offset ||
        known.length !== block.length ||
        checksumHex(known.crc) !== written
      ) {
        throw new RawSinkError(
          'TWG_RAW_CHECKSUM_MISMATCH',
          `batch ${i} is not where, or not what, the directory manifest recorded`,
          { file, position: block.offset, spans: [span] },
        );
      }
      return;
    }
    const crc = checksumOf(bytes.subarray(block.offset, block.offset + block.length));
    if (checksumHex(crc) !== written) {
      throw new RawSinkError(
        'TWG_RAW_CHECKSUM_MISMATCH',
        `batch ${i} (${block.length} bytes) fails its checksum: crc32c ${checksumHex(crc)}, ` +
          `${written} was written`,
        { file, position: block.offset, spans: [span] },
      );
    }
  });
}

function corrupt(file: string, reason: string): never {
  throw new RawSinkError('TWG_RAW_SEGMENT_CORRUPT', reason, { file });
}
