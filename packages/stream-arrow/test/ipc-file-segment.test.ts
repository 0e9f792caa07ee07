import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  column,
  readIpcFileSegment,
  writeIpcFileSegment,
} from '../src/index.js';
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
