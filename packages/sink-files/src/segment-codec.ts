import type { OffsetSpan } from '@thalweg/connector-core';
import { readIpcFileSegment, writeIpcFileSegment } from '@thalweg/stream-arrow';
import { RecordBatch } from 'apache-arrow';
import { RawSinkError, reasonOf } from './errors.js';
import {
  RAW_CLUSTER_METADATA,
  RAW_SPAN_METADATA,
  RawRows,
  rawSchema,
  spanFromJson,
} from './raw-envelope.js';

/** Schema metadata key of a segment's manifest. */
export const SEGMENT_MANIFEST_METADATA = 'twg.raw.segment';
const FORMAT = 'twg-raw-segment';
const VERSION = 1;

/**
 * A segment on disk is one Arrow IPC file (stream-arrow's file segment: a
 * footer indexes the batches and a torn write fails to read) whose batches
 * are raw envelopes, one per source batch, in submission order. An IPC file
 * has one schema, so the per-batch span metadata of the envelopes moves into
 * one manifest in the file's schema metadata:
 *
 * `twg.raw.segment` = `{"format":"twg-raw-segment","version":1,"cluster":…,
 * "spans":[{topic, partition, start, end}, …]}`, span i for batch i.
 */
export interface SegmentBatch {
  readonly span: OffsetSpan;
  /** An envelope batch (encodeRawBatch); its own schema metadata is not written. */
  readonly batch: RecordBatch;
}

export function encodeSegment(cluster: string, batches: readonly SegmentBatch[]): Uint8Array {
  const manifest = {
    format: FORMAT,
    version: VERSION,
    cluster,
    spans: batches.map((b) => b.span),
  };
  const schema = rawSchema(new Map([[SEGMENT_MANIFEST_METADATA, JSON.stringify(manifest)]]));
  return writeIpcFileSegment(batches.map((b) => new RecordBatch(schema, b.batch.data)));
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
 * buffer), the manifest, the envelope schema, and that each batch's offsets
 * ascend inside its span. Any failure names `file`; nothing is skipped.
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
  if (m.format !== FORMAT || m.version !== VERSION) {
    corrupt(file, `manifest format ${String(m.format)} v${String(m.version)} is not ${FORMAT} v1`);
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
