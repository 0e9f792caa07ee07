import { ColumnarBatch } from '../columns/columnar-batch.js';
import type { SourceBatch, SourceRecord } from '../source.js';

/**
 * A batch's values laid out in one buffer, for work on another thread (the
 * buffers transfer, the records would be cloned one by one) or done in one
 * go on this one: `bytes` holds them one after another, value i ending at
 * `ends[i]`, and `tombstones[i]` is 1 for a tombstone.
 */
export interface PackedValues {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly ends: Uint32Array<ArrayBuffer>;
  readonly tombstones: Uint8Array<ArrayBuffer>;
}

/** Packed values, and each record's offset and timestamp (ms since the epoch). */
export interface PackedRecords extends PackedValues {
  readonly offsets: Float64Array<ArrayBuffer>;
  readonly timestamps: Float64Array<ArrayBuffer>;
}

/**
 * A batch's records packed: read off a columnar batch's columns (no record
 * made), or from its records.
 */
export function packBatch(batch: SourceBatch): PackedRecords {
  return batch instanceof ColumnarBatch ? batch.packed() : packRecords(batch.records);
}

export function packValues(records: readonly SourceRecord[]): PackedValues {
  let total = 0;
  for (const r of records) total += r.value.byteLength;
  const bytes = new Uint8Array(total);
  const ends = new Uint32Array(records.length);
  const tombstones = new Uint8Array(records.length);
  let at = 0;
  records.forEach((r, i) => {
    bytes.set(r.value, at);
    at += r.value.byteLength;
    ends[i] = at;
    tombstones[i] = r.tombstone === true ? 1 : 0;
  });
  return { bytes, ends, tombstones };
}

export function packRecords(records: readonly SourceRecord[]): PackedRecords {
  const offsets = new Float64Array(records.length);
  const timestamps = new Float64Array(records.length);
  records.forEach((r, i) => {
    offsets[i] = r.offset;
    timestamps[i] = r.timestamp;
  });
  return { ...packValues(records), offsets, timestamps };
}

/** The buffers of packed records, to transfer with them. */
export function packedBuffers(packed: PackedValues | PackedRecords): ArrayBuffer[] {
  const buffers = [packed.bytes.buffer, packed.ends.buffer, packed.tombstones.buffer];
  if ('offsets' in packed) buffers.push(packed.offsets.buffer, packed.timestamps.buffer);
  return buffers;
}

/** Value i of packed values: a view, not a copy. */
export function packedValue(packed: PackedValues, i: number): Uint8Array<ArrayBuffer> {
  const start = i === 0 ? 0 : (packed.ends[i - 1] ?? 0);
  return packed.bytes.subarray(start, packed.ends[i] ?? start);
}
