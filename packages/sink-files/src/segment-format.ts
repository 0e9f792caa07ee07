import type { OffsetSpan } from '@thalweg/connector-core';
import type { PackedBatch } from './packed-batch.js';
import {
  decodeSegment,
  packedSegmentChunks,
  type DecodedSegment,
  type SegmentChunks,
} from './segment-codec.js';
import type { SegmentLayout } from './segment-layout.js';

/**
 * How one durable file of the raw sink holds its batches: the one thing a
 * raw file format adds to the sink. Everything else (the ack lane, the group
 * commit, the durable write, the directory manifest with each file's
 * checksums, the index, the read by offset window, the directory lock) is
 * the raw segment sink's, the same for every format. Arrow IPC segments are
 * the default; @thalweg/sink-parquet gives a zstd Parquet format.
 */
export interface SegmentFormat {
  /** The descriptor's kind, for messages and metrics: `raw-segments`, `parquet-files`. */
  readonly kind: string;
  /** The file name's extension: files are `seg-<16-digit sequence>.<extension>`. */
  readonly extension: string;
  /**
   * One file holding `batches` in order, as chunks to write, with the layout
   * (size and checksums) the directory manifest records for it.
   * `checksums: false` is the benchmarks' unchecked baseline only.
   */
  encode(cluster: string, batches: readonly PackedBatch[], checksums: boolean): SegmentChunks;
  /**
   * The file's batches read back, checked against `expected` (the layout and
   * spans the manifest recorded when the file was made durable) before
   * anything parses them; a failure names `file` and the reason.
   */
  decode(
    bytes: Uint8Array,
    file: string,
    expected: { readonly layout: SegmentLayout; readonly spans: readonly OffsetSpan[] },
  ): DecodedSegment;
}

/** Arrow IPC file segments (segment-codec.ts): the raw segment sink's own format. */
export const ARROW_IPC_SEGMENTS: SegmentFormat = Object.freeze({
  kind: 'raw-segments',
  extension: 'arrow',
  encode: packedSegmentChunks,
  decode: decodeSegment,
});
