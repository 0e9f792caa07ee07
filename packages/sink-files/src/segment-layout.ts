import type { OffsetSpan } from '@thalweg/connector-core';
import { checksumOf, checksumOfChunks } from './checksum.js';
import { RawSinkError } from './errors.js';

/** One batch's message in a segment file: `[at, at + length)` and its CRC32C. */
export interface BatchLayout {
  readonly at: number;
  readonly length: number;
  readonly crc: number;
}

/**
 * Where every byte of a segment lies and its checksum, as the writer made it
 * (ADR 0014): the head (magic and schema message with the segment's own
 * manifest), each batch message, and the tail (footer, its length, magic)
 * follow one another with no gap, so the checksums cover the whole file.
 * Recorded in the directory manifest (raw-manifest.ts) before anything the
 * segment holds is confirmed; a read checks the bytes against it before it
 * parses them.
 */
export interface SegmentLayout {
  readonly bytes: number;
  /** CRC32C of `[0, batches[0].at)`. */
  readonly head: number;
  /** CRC32C of `[last batch end, bytes)`. */
  readonly tail: number;
  readonly batches: readonly BatchLayout[];
}

/** The layout of an encoded segment, from the batch messages' ranges and their CRCs. */
export function layoutOfChunks(
  chunks: readonly Uint8Array[],
  bytes: number,
  batches: readonly BatchLayout[],
): SegmentLayout {
  const first = batches[0]?.at ?? bytes;
  const last = batches.at(-1);
  const end = last === undefined ? first : last.at + last.length;
  return {
    bytes,
    head: checksumOfChunks(chunks, 0, first),
    tail: checksumOfChunks(chunks, end, bytes),
    batches,
  };
}

/**
 * Checks `bytes` (segment `file`) against the layout it was written with,
 * before anything parses them: the length, then the head, every batch and
 * the tail. The first mismatch is a TWG_RAW_CHECKSUM_MISMATCH naming the
 * file, the byte position and the offset ranges that cannot be trusted
 * (the batch's span; every span of the segment when the head or tail, which
 * describe all of them, is damaged). A file shorter than written is a
 * TWG_RAW_SEGMENT_MISSING naming what it held.
 */
export function verifyLayout(
  bytes: Uint8Array,
  layout: SegmentLayout,
  spans: readonly OffsetSpan[],
  file: string,
): void {
  if (bytes.byteLength !== layout.bytes) {
    throw new RawSinkError(
      bytes.byteLength < layout.bytes ? 'TWG_RAW_SEGMENT_MISSING' : 'TWG_RAW_CHECKSUM_MISMATCH',
      `is ${bytes.byteLength} bytes, ${layout.bytes} were made durable`,
      { file, position: Math.min(bytes.byteLength, layout.bytes), spans },
    );
  }
  for (const problem of layoutDamage(bytes, layout, spans)) {
    throw new RawSinkError('TWG_RAW_CHECKSUM_MISMATCH', problem.reason, {
      file,
      position: problem.position,
      spans: problem.spans,
    });
  }
}

/** One damaged region of a segment. */
export interface LayoutDamage {
  readonly position: number;
  readonly spans: readonly OffsetSpan[];
  readonly reason: string;
}

/**
 * Every region of `bytes` whose checksum differs from the layout's (all of
 * them, for `thalweg raw verify`; a read stops at the first). `bytes` must
 * be as long as the layout says.
 */
export function* layoutDamage(
  bytes: Uint8Array,
  layout: SegmentLayout,
  spans: readonly OffsetSpan[],
): Generator<LayoutDamage> {
  const first = layout.batches[0]?.at ?? layout.bytes;
  const last = layout.batches.at(-1);
  const end = last === undefined ? first : last.at + last.length;
  if (checksumOf(bytes.subarray(0, first)) !== layout.head) {
    yield {
      position: 0,
      spans,
      reason: 'the head (schema and segment manifest) fails its checksum',
    };
  }
  let i = 0;
  for (const b of layout.batches) {
    const crc = checksumOf(bytes.subarray(b.at, b.at + b.length));
    if (crc !== b.crc) {
      const span = spans[i];
      yield {
        position: b.at,
        spans: span === undefined ? spans : [span],
        reason:
          `batch ${i} (${b.length} bytes) fails its checksum: crc32c ${crc.toString(16)}, ` +
          `${b.crc.toString(16)} was written`,
      };
    }
    i++;
  }
  if (checksumOf(bytes.subarray(end, layout.bytes)) !== layout.tail) {
    yield { position: end, spans, reason: 'the tail (footer) fails its checksum' };
  }
}
