import type { RecordBatch } from 'apache-arrow';

/**
 * A column of a batch as plain JavaScript values, read from its buffers
 * (timestamps as their bigint storage: apache-arrow's `get` turns them into
 * lossy millisecond numbers).
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
    } else {
      const v: unknown = vector.get(i);
      out.push(v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v);
    }
  }
  return out;
}
