import type { RecordBatch } from 'apache-arrow';

/** Keeps a leading U+FEFF: it is data, not a byte-order mark to strip. */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A column of a batch as plain JavaScript values, read from its buffers
 * (timestamps as their bigint storage: apache-arrow's `get` turns them into
 * lossy millisecond numbers; strings decoded here, since apache-arrow's `get`
 * drops a leading U+FEFF).
 */
export function readColumn(batch: RecordBatch, name: string): unknown[] {
  const vector = batch.getChild(name);
  if (vector === null) throw new Error(`no column ${name}`);
  const out: unknown[] = [];
  const type = String(vector.type);
  for (let i = 0; i < vector.length; i++) {
    if (!vector.isValid(i)) out.push(null);
    else if (type.startsWith('Timestamp') || type.startsWith('Date')) {
      out.push((vector.data[0]!.values as ArrayLike<unknown>)[i]);
    } else if (type === 'Utf8') {
      const data = vector.data[0]!;
      const offsets = data.valueOffsets as Int32Array;
      const at = data.offset + i;
      out.push(utf8.decode((data.values as Uint8Array).subarray(offsets[at], offsets[at + 1])));
    } else {
      const v: unknown = vector.get(i);
      out.push(v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v);
    }
  }
  return out;
}
