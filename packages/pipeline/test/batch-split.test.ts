import { describe, expect, it } from 'vitest';
import {
  ColumnarBatch,
  ColumnsWriter,
  offsetSpan,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import {
  anyLarger,
  batchBytes,
  payloadBytes,
  recordBytes,
  splitBatch,
} from '../src/batch-split.js';

/** A small deterministic generator (a 31-bit LCG), so a failure names its seed. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** Records at offsets with holes, values of 0..600 bytes, some keys null; headers when asked. */
function batchOf(seed: number, headers: boolean): SourceBatch {
  const next = random(seed);
  const records: SourceRecord[] = [];
  let offset = 100 + Math.floor(next() * 5);
  const count = 1 + Math.floor(next() * 60);
  for (let i = 0; i < count; i++) {
    records.push({
      offset,
      key: next() < 0.3 ? null : Buffer.alloc(Math.floor(next() * 20), 1),
      value: Buffer.alloc(Math.floor(next() * 600), 2),
      timestamp: 1_700_000_000_000 + i,
      headers: headers && next() < 0.5 ? [['h', Buffer.alloc(Math.floor(next() * 30), 3)]] : [],
    });
    offset += 1 + (next() < 0.2 ? Math.floor(next() * 4) : 0);
  }
  return { span: offsetSpan('t', 0, 98, offset + 2), records };
}

const spans = (pieces: readonly SourceBatch[]) => pieces.map((p) => [p.span.start, p.span.end]);
const offsets = (pieces: readonly SourceBatch[]) =>
  pieces.map((p) => p.records.map((r) => r.offset));

describe('splitBatch', () => {
  it('sizes and cuts a columnar batch as it does the same records, into slices that make no record', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const batch = batchOf(seed, seed % 2 === 0);
      const columnar = new ColumnsWriter().write(batch);
      expect(payloadBytes(columnar), `seed ${seed}`).toBe(payloadBytes(batch));
      expect(batchBytes(columnar), `seed ${seed}`).toBe(batchBytes(batch));
      const limits = { maxRecords: 1 + (seed % 17), maxBytes: 200 + ((seed * 97) % 3000) };
      const pieces = splitBatch(columnar, limits);
      for (const piece of pieces) expect(piece).toBeInstanceOf(ColumnarBatch);
      // Also at the largest record's size, one byte under it, and above the whole batch.
      const largest = Math.max(0, ...batch.records.map(recordBytes));
      for (const limit of [300, 500, 700, largest, largest - 1, 64 + batchBytes(batch)]) {
        expect(anyLarger(columnar, limit), `seed ${seed}`).toBe(anyLarger(batch, limit));
      }
      const expected = splitBatch(batch, limits);
      expect(spans(pieces), `seed ${seed}`).toEqual(spans(expected));
      expect(offsets(pieces), `seed ${seed}`).toEqual(offsets(expected));
    }
  });

  it('tiles the span with pieces inside the limits when records carry headers', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const columnar = new ColumnsWriter().write(batchOf(seed, true));
      const limits = { maxRecords: 1 + (seed % 9), maxBytes: 300 + ((seed * 31) % 2000) };
      const pieces = splitBatch(columnar, limits);
      expect(pieces[0]?.span.start).toBe(columnar.span.start);
      expect(pieces.at(-1)?.span.end).toBe(columnar.span.end);
      for (let i = 1; i < pieces.length; i++) {
        expect(pieces[i]?.span.start).toBe(pieces[i - 1]?.span.end);
      }
      for (const piece of pieces) {
        const count = piece.records.length;
        expect(count).toBeLessThanOrEqual(limits.maxRecords);
        // A single record may pass maxBytes on its own; a piece of several never does.
        if (count > 1) expect(batchBytes(piece)).toBeLessThanOrEqual(limits.maxBytes);
      }
      expect(pieces.flatMap((p) => p.records.map((r) => r.offset))).toEqual(
        columnar.records.map((r) => r.offset),
      );
    }
  });
});
