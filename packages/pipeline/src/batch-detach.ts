import {
  columnarOf,
  type SourceBatch,
  type SourceHeaders,
  type SourceRecord,
} from '@thalweg/connector-core';

/**
 * The batch with its records' bytes (keys, values, header values) copied
 * into one buffer of its own. A source hands records whose bytes are views
 * of what it read: kafkajs's values are slices of a whole fetch response,
 * an IPC source's of a decoded body. A batch a secondary lane keeps waiting
 * keeps all of that alive after raw released it, several times the bytes
 * the lane counts. Detached, the batch holds exactly its own bytes.
 *
 * The records are new objects with the same fields; their bytes are equal
 * and `Buffer`s, as the sources deliver them.
 */
export function detachBatch(batch: SourceBatch): SourceBatch {
  // Columns: the slice's regions copied, or the batch itself when it is all of them.
  const columnar = columnarOf(batch);
  if (columnar !== null) return columnar.detached();
  const records = batch.records;
  let total = 0;
  for (const r of records) {
    total += r.value.byteLength + (r.key?.byteLength ?? 0);
    for (const [, value] of r.headers) total += value?.byteLength ?? 0;
  }
  const store = Buffer.allocUnsafeSlow(total);
  let at = 0;
  const copy = (bytes: Uint8Array): Buffer => {
    store.set(bytes, at);
    const view = store.subarray(at, at + bytes.byteLength);
    at += bytes.byteLength;
    return view;
  };
  const detached = new Array<SourceRecord>(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as SourceRecord;
    const base = {
      offset: r.offset,
      key: r.key === null ? null : copy(r.key),
      value: copy(r.value),
      timestamp: r.timestamp,
      headers: r.headers.length === 0 ? r.headers : copyHeaders(r.headers, copy),
    };
    detached[i] = r.tombstone === true ? { ...base, tombstone: true } : base;
  }
  return { span: batch.span, records: detached };
}

function copyHeaders(headers: SourceHeaders, copy: (bytes: Uint8Array) => Buffer): SourceHeaders {
  return headers.map(([name, value]) => [name, value === null ? null : copy(value)] as const);
}
