import { makeData, Utf8, type Data } from 'apache-arrow';
import type { FieldSpec } from './batch-schema.js';
import { freshMemory, type ColumnMemory } from './column-memory.js';
import { toUtf8 } from './column-values.js';
import { ArrowBatchError } from './errors.js';
import { ValidityBitmap } from './validity-bitmap.js';

/** Strings longer than this go through the native encoder; shorter ones are copied in JS. */
const NATIVE_FROM = 48;
/** Utf8 uses i32 offsets: one column holds at most 2^31 - 1 bytes. */
const MAX_BYTES = 0x7fffffff;

/**
 * A utf8 column built directly from value offsets: each string is encoded
 * into one growing buffer and its end recorded, so no per-value objects are
 * created. Short ASCII strings (the common case for keys, names and codes)
 * are copied by a JS loop, because the native encoder's per-call cost
 * dominates at a few dozen bytes; anything else goes to `Buffer#utf8Write`,
 * which encodes lone surrogates as U+FFFD like TextEncoder.
 */
export function utf8Column(
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  memory: ColumnMemory = freshMemory,
): Data<Utf8> {
  const length = values.length;
  const validity = new ValidityBitmap(spec, length, memory);
  const valueOffsets = memory.int32(length + 1);
  let data: Buffer = memory.growable(Math.max(64, length * 16));
  let at = 0;
  for (let row = 0; row < length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (typeof v === 'string') {
      const chars = v.length;
      if (at + chars * 3 > data.length) data = grow(memory, data, at, v, spec, row);
      let i = 0;
      if (chars <= NATIVE_FROM) {
        for (; i < chars; i++) {
          const c = v.charCodeAt(i);
          if (c > 0x7f) break;
          data[at + i] = c;
        }
      }
      at += i === chars ? chars : data.write(v, at, 'utf8');
    } else if (v === null || v === undefined) {
      validity.setNull(row, v);
    } else {
      toUtf8(v, spec, row);
    }
    valueOffsets[row + 1] = at;
  }
  return makeData({
    type: new Utf8(),
    length,
    nullCount: validity.nullCount,
    nullBitmap: validity.buffer,
    valueOffsets,
    data: memory.keep(data, at),
  });
}

/**
 * Room for `value` at `used`. The reserve is 3 bytes per UTF-16 unit (the
 * most any unit encodes to), so a write can never be truncated; near the
 * i32 limit the exact length decides, so a column that fits is never refused.
 */
function grow(
  memory: ColumnMemory,
  data: Buffer,
  used: number,
  value: string,
  spec: FieldSpec,
  row: number,
): Buffer {
  let needed = used + value.length * 3;
  if (needed > MAX_BYTES) {
    needed = used + Buffer.byteLength(value, 'utf8');
    if (needed > MAX_BYTES) {
      throw new ArrowBatchError(
        'TWG_ARROW_INPUT_INVALID',
        `utf8 column would exceed ${MAX_BYTES} bytes (i32 offsets); build smaller batches`,
        { field: spec.name, row },
      );
    }
  }
  const next = memory.growable(Math.min(MAX_BYTES, Math.max(needed, data.length * 2)));
  data.copy(next, 0, 0, used);
  return next;
}

/** A row object; `key` names the property a column is read from. */
type Fields = Readonly<Record<string, unknown>>;
