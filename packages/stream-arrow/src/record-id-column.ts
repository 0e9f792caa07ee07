import { RecordIdHasher, RECORD_ID_BYTES, ThalwegError } from '@thalweg/connector-core';
import { Binary, makeData, Utf8, type Data } from 'apache-arrow';
import { freshMemory, type ColumnMemory } from './column-memory.js';
import { ArrowBatchError, type ArrowErrorCode } from './errors.js';

/**
 * Where each row of a batch came from: what `_twg_record_id` (ADR 0003) is
 * computed from. A batch carries one `OffsetSpan`, so it comes from one
 * partition of one source cluster; each row has its own source offset and
 * the exact payload bytes the source delivered (not the decoded row: the id
 * must not change when a decoder does).
 */
export interface RecordProvenance {
  readonly cluster: string;
  readonly topic: string;
  readonly partition: number;
  /** Source offset of row i. */
  readonly offsets: ArrayLike<number>;
  /** Payload bytes of row i, as received from the source. */
  readonly payloads: ArrayLike<Uint8Array>;
}

/**
 * The record id column for `rows` rows, as 32 lower-case hex digits (utf8)
 * or 16 raw bytes (binary). Both have a fixed width, so the value offsets
 * are a stride and the digits are written straight into the data buffer.
 */
export function recordIdColumn(
  encoding: 'hex' | 'binary',
  provenance: RecordProvenance,
  rows: number,
  field: string,
  memory: ColumnMemory = freshMemory,
): Data {
  if (provenance.offsets.length !== rows || provenance.payloads.length !== rows) {
    fail(
      'TWG_ARROW_INPUT_INVALID',
      field,
      undefined,
      `record id inputs hold ${provenance.offsets.length} offsets and ` +
        `${provenance.payloads.length} payloads for ${rows} rows`,
    );
  }
  let hasher: RecordIdHasher;
  try {
    hasher = new RecordIdHasher(provenance.cluster, provenance.topic, provenance.partition);
  } catch (cause) {
    return fail('TWG_ARROW_INPUT_INVALID', field, undefined, reason(cause), cause);
  }
  const width = encoding === 'hex' ? 2 * RECORD_ID_BYTES : RECORD_ID_BYTES;
  const data = memory.bytes(rows * width);
  const out = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const valueOffsets = memory.int32(rows + 1);
  for (let row = 0; row < rows; row++) {
    const payload = provenance.payloads[row];
    if (!(payload instanceof Uint8Array)) {
      fail('TWG_ARROW_INPUT_INVALID', field, row, 'record id payload is not a Uint8Array');
    }
    const at = row * width;
    try {
      hasher.writeId(provenance.offsets[row] ?? Number.NaN, payload, encoding, out, at);
    } catch (cause) {
      return fail('TWG_ARROW_INPUT_INVALID', field, row, reason(cause), cause);
    }
    valueOffsets[row + 1] = at + width;
  }
  const props = { length: rows, nullCount: 0, valueOffsets, data };
  return encoding === 'hex'
    ? makeData({ type: new Utf8(), ...props })
    : makeData({ type: new Binary(), ...props });
}

function reason(cause: unknown): string {
  return cause instanceof ThalwegError || cause instanceof Error ? cause.message : String(cause);
}

function fail(
  code: ArrowErrorCode,
  field: string,
  row: number | undefined,
  message: string,
  cause?: unknown,
): never {
  throw new ArrowBatchError(code, message, row === undefined ? { field } : { field, row }, cause);
}
