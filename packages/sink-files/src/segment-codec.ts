import type { OffsetSpan } from '@thalweg/connector-core';
import {
  ArrowBatchError,
  readIpcFileSegmentBlocks,
  type IpcFileBlock,
} from '@thalweg/stream-arrow';
import { RecordBatch } from 'apache-arrow';
import { checksumHex, checksumOf } from './checksum.js';
import { RawSinkError, reasonOf } from './errors.js';
import {
  RAW_CLUSTER_METADATA,
  RAW_SPAN_METADATA,
  RawRows,
  rawSchema,
  spanFromJson,
} from './raw-envelope.js';
import {
  SEGMENT_FORMAT,
  SEGMENT_FORMAT_VERSION,
  SEGMENT_MANIFEST_METADATA,
} from './segment-encoder.js';
import { verifyLayout, type SegmentLayout } from './segment-layout.js';

export {
  SEGMENT_FORMAT_VERSION,
  SEGMENT_MANIFEST_METADATA,
  encodePackedSegment,
  encodeSegment,
  packedSegmentChunks,
  type SegmentBatch,
  type SegmentChunks,
} from './segment-encoder.js';

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
  if (m.format !== SEGMENT_FORMAT)
    corrupt(file, `manifest format ${String(m.format)} is not ${SEGMENT_FORMAT}`);
  if (m.version !== SEGMENT_FORMAT_VERSION) {
    throw new RawSinkError(
      'TWG_RAW_SEGMENT_VERSION',
      `is ${SEGMENT_FORMAT} version ${String(m.version)}; this sink reads version ` +
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
