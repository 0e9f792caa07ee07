import { offsetSpan, type SourceBatch, type SourceRecord } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { detachBatch } from '../src/batch-detach.js';

/** A batch whose bytes are all views of one shared read buffer, as kafkajs's are. */
function viewsOfOneBuffer(): { batch: SourceBatch; read: Buffer } {
  const read = Buffer.from('k0v0-hv1--v2', 'latin1');
  const records: SourceRecord[] = [
    {
      offset: 10,
      key: read.subarray(0, 2),
      value: read.subarray(2, 4),
      timestamp: 1,
      headers: [
        ['h', read.subarray(5, 6)],
        ['n', null],
      ],
    },
    { offset: 11, key: null, value: read.subarray(6, 8), timestamp: 2, headers: [] },
    {
      offset: 13,
      key: null,
      value: read.subarray(0, 0),
      timestamp: 3,
      headers: [],
      tombstone: true,
    },
    { offset: 12, key: null, value: read.subarray(10, 12), timestamp: 4, headers: [] },
  ];
  records.sort((a, b) => a.offset - b.offset);
  const batch: SourceBatch = { span: offsetSpan('t', 3, 10, 14), records };
  return { batch, read };
}

describe('detachBatch', () => {
  it('holds the same records, none of their bytes a view of the read buffer', () => {
    const { batch, read } = viewsOfOneBuffer();
    const detached = detachBatch(batch);
    expect(detached.span).toBe(batch.span);
    expect(detached.records).toEqual(batch.records);
    for (const r of detached.records) {
      for (const bytes of [r.key, r.value, ...r.headers.map(([, v]) => v)]) {
        if (bytes !== null) expect(bytes.buffer).not.toBe(read.buffer);
      }
      expect(Buffer.isBuffer(r.value)).toBe(true);
    }
    // One buffer of exactly the records' bytes: 2 + 2 + 1 + 2 + 0 + 2.
    expect(detached.records[0]?.value.buffer.byteLength).toBe(9);
  });

  it('keeps a tombstone marked and an empty header list shared', () => {
    const { batch } = viewsOfOneBuffer();
    const detached = detachBatch(batch);
    const tomb = detached.records.find((r) => r.offset === 13);
    expect(tomb?.tombstone).toBe(true);
    expect(detached.records.filter((r) => r.tombstone === true)).toHaveLength(1);
    expect(detached.records[1]?.headers).toBe(batch.records[1]?.headers);
  });

  it('copies, so a change to the read buffer after it does not reach the copy', () => {
    const { batch, read } = viewsOfOneBuffer();
    const detached = detachBatch(batch);
    read.fill(0);
    expect(Buffer.from(detached.records[0]?.value ?? []).toString('latin1')).toBe('v0');
  });
});
