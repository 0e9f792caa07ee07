import { Field, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  column,
  readIpcFileSegment,
  writeIpcFileSegment,
} from '../src/index.js';
import { byteFlips, flipped } from './byte-flips.js';
import { readColumn } from './read-column.js';

const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'at', type: column.timestamp('us'), nullable: true },
    { name: 'body', type: column.binary, nullable: true },
  ],
  recordId: 'hex',
});
const builder = new BatchBuilder(schema);
const provenance = (start: number, n: number) => ({
  cluster: 'c',
  topic: 'events',
  partition: 0,
  offsets: Array.from({ length: n }, (_, i) => start + i),
  payloads: Array.from({ length: n }, (_, i) => Buffer.from(`payload-${start + i}`)),
});
const first = builder.fromRows(
  [
    { id: 1n, at: 10n, body: Buffer.from('a') },
    { id: 2n, at: null, body: null },
  ],
  provenance(100, 2),
);
const second = builder.fromRows(
  [{ id: 3n, at: 30n, body: new Uint8Array(70_000) }],
  provenance(102, 1),
);

function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected an ArrowBatchError');
}

/**
 * Positions in a segment's footer (File.fbs `Footer`: slot 1 schema, slot 3
 * record batch blocks; `Schema`: slot 2 custom metadata), by a minimal
 * FlatBuffers walk: a table starts with an i32 back to its vtable, a
 * reference is a u32 forward from where it is stored.
 */
function footerPositions(segment: Uint8Array) {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  const footerAt = segment.byteLength - 10 - view.getInt32(segment.byteLength - 10, true);
  const referenced = (at: number) => at + view.getUint32(at, true);
  const slot = (table: number, index: number) => {
    const vtable = table - view.getInt32(table, true);
    return table + view.getUint16(vtable + 4 + 2 * index, true);
  };
  const footer = referenced(footerAt);
  const schema = referenced(slot(footer, 1));
  return {
    /** Where the u32 counts of the schema's metadata and of the record batch blocks are. */
    metadataCount: referenced(slot(schema, 2)),
    blockCount: referenced(slot(footer, 3)),
  };
}

describe('IPC file segments', () => {
  const segment = writeIpcFileSegment([first, second]);

  it('writes batches behind ARROW1 magic and a footer, and reads them back', () => {
    expect(Buffer.from(segment.subarray(0, 6)).toString()).toBe('ARROW1');
    expect(Buffer.from(segment.subarray(-6)).toString()).toBe('ARROW1');
    const batches = readIpcFileSegment(segment, { expect: schema });
    expect(batches.map((b) => b.numRows)).toEqual([2, 1]);
    expect(readColumn(batches[0]!, 'at')).toEqual([10n, null]);
    expect(readColumn(batches[1]!, 'id')).toEqual([3n]);
    expect(readColumn(batches[1]!, '_twg_record_id')).toEqual(readColumn(second, '_twg_record_id'));
  });

  it('detects a torn write anywhere, with the offset', () => {
    for (const keep of [segment.byteLength - 1, segment.byteLength - 12, 300, 7]) {
      const error = refusal(() => readIpcFileSegment(segment.subarray(0, keep)));
      expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
      expect(error.offset).toBeGreaterThanOrEqual(0);
    }
    expect(
      refusal(() => readIpcFileSegment(Buffer.from('ARROW1 but then nothing useful'))).code,
    ).toBe('TWG_ARROW_IPC_INVALID');
  });

  it('refuses footer vector counts that reach past the footer, instead of spinning on them', () => {
    // A schema with metadata: apache-arrow would read 2^30 key-value pairs
    // from past the end of the footer (minutes of CPU) before any check.
    const fields = [new Field('id', new Int64(), false)];
    const tagged = new Schema(fields, new Map([['origin', 'test']]));
    const ids = makeData({
      type: new Int64(),
      length: 1,
      nullCount: 0,
      data: new BigInt64Array([7n]),
    });
    const struct = makeData({ type: new Struct(fields), length: 1, nullCount: 0, children: [ids] });
    const withMetadata = writeIpcFileSegment([new RecordBatch(tagged, struct)]);
    const { metadataCount, blockCount } = footerPositions(withMetadata);
    for (const at of [metadataCount, blockCount]) {
      const corrupted = Buffer.from(withMetadata);
      corrupted.writeUInt32LE(0x4000_0000, at);
      const error = refusal(() => readIpcFileSegment(corrupted));
      expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
      expect(error.message).toMatch(/reaches outside the \d+-byte/);
    }
  });

  it('refuses a footer that lists a batch twice and leaves another out', () => {
    const { blockCount } = footerPositions(segment);
    const blocks = blockCount + 4; // two 24-byte Block structs
    const corrupted = Buffer.from(segment);
    corrupted.copy(corrupted, blocks, blocks + 24, blocks + 48);
    const error = refusal(() => readIpcFileSegment(corrupted, { expect: schema }));
    expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
    expect(error.message).toMatch(/footer record batch block 0 is not the message at byte 8/);
  });

  it('never hangs or reads other batches on corrupted bytes: an ArrowBatchError or the same rows', () => {
    fc.assert(
      fc.property(byteFlips(segment.byteLength, 3), (flips) => {
        const corrupted = flipped(segment, flips);
        try {
          const batches = readIpcFileSegment(corrupted, { expect: schema });
          expect(batches.map((b) => b.numRows)).toEqual([2, 1]);
        } catch (error) {
          expect(error).toBeInstanceOf(ArrowBatchError);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('refuses no batches, mixed schemas and an unexpected schema', () => {
    expect(refusal(() => writeIpcFileSegment([])).code).toBe('TWG_ARROW_BATCH_EMPTY');
    const other = new BatchBuilder(
      BatchSchema.define({ fields: [{ name: 'id', type: column.int64, nullable: true }] }),
    ).fromRows([{ id: 1n }]);
    expect(refusal(() => writeIpcFileSegment([first, other])).code).toBe(
      'TWG_ARROW_SCHEMA_MISMATCH',
    );
    const lone = writeIpcFileSegment([other]);
    expect(refusal(() => readIpcFileSegment(lone, { expect: schema })).code).toBe(
      'TWG_ARROW_SCHEMA_MISMATCH',
    );
  });
});
