import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { offsetSpan, type SourceBatch, type SourceRecord } from '@thalweg/connector-core';
import { anchor, openSink, plain, readAll, record, recordingTarget, tempDir } from './helpers.js';

const TOPICS = ['a', 'b'] as const;

/** Per partition, consecutive batches of random size with random holes; then an interleaving. */
const scenario = fc
  .record({
    partitions: fc.array(
      fc.array(
        fc.record({
          length: fc.integer({ min: 1, max: 12 }),
          holes: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      { minLength: 1, maxLength: 3 },
    ),
    order: fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
    redeliver: fc.array(fc.nat(), { maxLength: 4 }),
    maxBatchesPerSegment: fc.integer({ min: 1, max: 5 }),
    readChunkRecords: fc.integer({ min: 1, max: 7 }),
  })
  .map((s) => {
    const perPartition: SourceBatch[][] = s.partitions.map((shapes, p) => {
      let start = p * 1000;
      return shapes.map(({ length, holes }) => {
        const records: SourceRecord[] = [];
        for (let i = 0; i < length; i++) {
          if (!holes[i])
            records.push(record(start + i, { value: Buffer.from(`p${p}-${start + i}`) }));
        }
        const batch = { span: offsetSpan(TOPICS[p % 2]!, p, start, start + length), records };
        start += length;
        return batch;
      });
    });
    // Interleave partitions (each partition's batches stay in order).
    const cursors = perPartition.map(() => 0);
    const submissions: SourceBatch[] = [];
    let k = 0;
    while (cursors.some((c, p) => c < perPartition[p]!.length)) {
      const live = cursors.flatMap((c, p) => (c < perPartition[p]!.length ? [p] : []));
      const p = live[(s.order[k++ % s.order.length] ?? 0) % live.length]!;
      submissions.push(perPartition[p]![cursors[p]!++]!);
    }
    for (const r of s.redeliver) submissions.push(submissions[r % submissions.length]!);
    return { ...s, perPartition, submissions };
  });

describe('RawSegmentSink property', () => {
  it('reads back exactly what any interleaving of batches submitted, once per offset', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const target = recordingTarget();
        const sink = await openSink(await tempDir(), {
          confirm: target,
          maxBatchesPerSegment: s.maxBatchesPerSegment,
          readChunkRecords: s.readChunkRecords,
        });
        for (const b of s.submissions) await sink.submit(b, b.span, anchor(b));
        await sink.flush();
        expect(target.applied.map((a) => a.receipt.span)).toEqual(s.submissions.map((b) => b.span));
        for (const [p, batches] of s.perPartition.entries()) {
          const { records, batches: read } = await readAll(sink, TOPICS[p % 2]!, p);
          expect(plain(records)).toEqual(plain(batches.flatMap((b) => [...b.records])));
          const first = batches[0]!.span.start;
          const last = batches.at(-1)!.span.end;
          // The yielded spans tile the one durable run without gaps or overlaps.
          expect(read[0]!.span.start).toBe(first);
          expect(read.at(-1)!.span.end).toBe(last);
          read.forEach((b, i) => {
            if (i > 0) expect(b.span.start).toBe(read[i - 1]!.span.end);
            expect(b.records.length).toBeLessThanOrEqual(s.readChunkRecords);
          });
          expect(sink.durableSpans({ topic: TOPICS[p % 2]!, partition: p })).toEqual([
            offsetSpan(TOPICS[p % 2]!, p, first, last),
          ]);
        }
        await sink.close();
      }),
      { numRuns: 25 },
    );
  });
});
