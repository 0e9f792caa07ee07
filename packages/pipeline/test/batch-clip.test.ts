import { columnarOf, ColumnsWriter, offsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { submittedPart } from '../src/batch-clip.js';
import { makeRecords } from './doubles/memory-sources.js';

const plainBatch = (): SourceBatch => ({
  span: offsetSpan('t', 0, 0, 5),
  records: makeRecords('t', 0, 5),
});

describe('submittedPart: what a lane holds until its sink settles', () => {
  it('holds a columnar batch as columns, without the records its derivation made', () => {
    const batch = new ColumnsWriter().write(plainBatch());
    const made = batch.records;
    const part = submittedPart(batch, []);
    expect(columnarOf(part)?.columns).toBe(batch.columns);
    // Made again only if read (a sink that sets the batch aside): equal, not the same objects.
    expect(part.records).not.toBe(made);
    expect(part).toEqual(batch);
  });

  it('holds a plain batch as it is, and leaves out what the derivation quarantined', () => {
    const batch = plainBatch();
    expect(submittedPart(batch, [])).toBe(batch);
    const part = submittedPart(batch, [{ offset: 2, reason: 'decode', detail: 'not JSON' }]);
    expect(part.span).toEqual(batch.span);
    expect(part.records.map((r) => r.offset)).toEqual([0, 1, 3, 4]);
    const columnar = submittedPart(new ColumnsWriter().write(batch), [
      { offset: 0, reason: 'decode', detail: 'not JSON' },
    ]);
    expect(columnar.records.map((r) => r.offset)).toEqual([1, 2, 3, 4]);
  });
});
