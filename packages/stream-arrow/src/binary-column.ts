import { Binary, makeData, type Data } from 'apache-arrow';
import type { FieldSpec } from './batch-schema.js';
import { freshMemory, type ColumnMemory } from './column-memory.js';
import { toBinary } from './column-values.js';
import { ArrowBatchError } from './errors.js';
import { ValidityBitmap } from './validity-bitmap.js';

const MAX_BYTES = 0x7fffffff;

/**
 * A binary column built directly from value offsets, in two passes: the
 * first checks every value and computes the offsets (so the data buffer is
 * allocated once, at its exact size), the second copies the bytes.
 */
export function binaryColumn(
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  memory: ColumnMemory = freshMemory,
): Data<Binary> {
  const length = values.length;
  const validity = new ValidityBitmap(spec, length, memory);
  const valueOffsets = memory.int32(length + 1);
  let total = 0;
  for (let row = 0; row < length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (v instanceof Uint8Array) total += v.byteLength;
    else if (v === null || v === undefined) validity.setNull(row, v);
    else toBinary(v, spec, row);
    if (total > MAX_BYTES) {
      throw new ArrowBatchError(
        'TWG_ARROW_INPUT_INVALID',
        `binary column would exceed ${MAX_BYTES} bytes (i32 offsets); build smaller batches`,
        { field: spec.name, row },
      );
    }
    valueOffsets[row + 1] = total;
  }
  const data = memory.bytes(total);
  for (let row = 0; row < length; row++) {
    const v = key === undefined ? values[row] : (values[row] as Fields)[key];
    if (!(v instanceof Uint8Array)) continue;
    data.set(v, valueOffsets[row] ?? 0);
  }
  return makeData({
    type: new Binary(),
    length,
    nullCount: validity.nullCount,
    nullBitmap: validity.buffer,
    valueOffsets,
    data,
  });
}

/** A row object; `key` names the property a column is read from. */
type Fields = Readonly<Record<string, unknown>>;
