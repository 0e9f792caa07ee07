import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assertPrimaryRaw,
  derivedCoverage,
  NO_CONFIRM,
  offsetSpan,
  rawAnchor,
  recordId,
  sinkId,
  type SourceBatch,
} from '@thalweg/connector-core';
import { RawSinkError, decodeSegment, type RawSegmentSinkOptions } from '../src/index.js';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  anchor,
  batchOf,
  CLUSTER,
  openSink,
  plain,
  readAll,
  record,
  recordingTarget,
  tempDir,
  WRITERS,
  dataFiles,
} from './helpers.js';

describe.each(WRITERS)('RawSegmentSink, %s writer', (writer) => {
  const open = (dir: string, options: Partial<RawSegmentSinkOptions> = {}) =>
    openSink(dir, { writer, ...options });

  it('describes itself as a durable, readable primary raw', async () => {
    const sink = await open(await tempDir());
    expect(sink.descriptor).toEqual({
      id: 'raw',
      kind: 'raw-segments',
      durability: { kind: 'flush-close' },
      recovery: { kind: 'readable' },
    });
    expect(() => assertPrimaryRaw(sink.descriptor)).not.toThrow();
    await sink.close();
  });

  it('confirms in submission order with flush-close receipts and reads back what was submitted', async () => {
    const dir = await tempDir();
    const target = recordingTarget();
    const sink = await open(dir, { confirm: target });
    const batches = [
      batchOf('orders', 0, 0, 5),
      batchOf('orders', 1, 0, 3),
      batchOf('orders', 0, 5, 9),
      batchOf('payments', 0, 100, 102),
      batchOf('orders', 1, 3, 4),
    ];
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    await sink.flush();

    expect(target.applied.map((a) => a.confirm)).toEqual(batches.map((b) => rawAnchor(b.span)));
    for (const [i, { receipt }] of target.applied.entries()) {
      const b = batches[i]!;
      expect(receipt).toMatchObject({
        sink: 'raw',
        span: b.span,
        durability: 'flush-close',
        records: b.records.length,
      });
      expect(receipt.bytes).toBeGreaterThan(0);
      expect(receipt.confirmedAt).toBeGreaterThanOrEqual(receipt.submittedAt);
    }
    const orders0 = await readAll(sink, 'orders', 0);
    expect(plain(orders0.records)).toEqual(plain([...batches[0]!.records, ...batches[2]!.records]));
    expect(orders0.batches.map((b) => b.span)).toEqual([offsetSpan('orders', 0, 0, 9)]);
    const orders1 = await readAll(sink, 'orders', 1);
    expect(plain(orders1.records)).toEqual(plain([...batches[1]!.records, ...batches[4]!.records]));
    expect(plain((await readAll(sink, 'payments', 0)).records)).toEqual(plain(batches[3]!.records));
    expect(sink.partitions()).toEqual([
      { topic: 'orders', partition: 0 },
      { topic: 'orders', partition: 1 },
      { topic: 'payments', partition: 0 },
    ]);
    await sink.close();
  });

  it('records the cluster, so recovery recomputes from what read returns the ids connector-core gives the source records', async () => {
    const dir = await tempDir();
    const sink = await open(dir);
    const b = batchOf('orders', 4, 50, 60);
    await sink.submit(b, b.span, anchor(b));
    await sink.close();
    const [file] = (await readdir(dir)).filter((n) => n.endsWith('.arrow'));
    const segment = decodeSegment(await readFile(join(dir, file!)), file!);
    expect(segment.cluster).toBe(CLUSTER);
    const { records } = await readAll(sink, 'orders', 4);
    expect(records).toHaveLength(b.records.length);
    records.forEach((r, i) => {
      const recovered = recordId({
        cluster: segment.cluster,
        topic: 'orders',
        partition: 4,
        offset: r.offset,
        payload: r.value,
      });
      const source = b.records[i]!;
      const expected = recordId({
        cluster: CLUSTER,
        topic: 'orders',
        partition: 4,
        offset: source.offset,
        payload: source.value,
      });
      expect(recovered.equals(expected)).toBe(true);
    });
  });

  it('reads a window: only offsets inside it, chunked into spans that tile the durable runs', async () => {
    const sink = await open(await tempDir(), { readChunkRecords: 4 });
    // Offsets 0..9 and 20..29 with holes the source accounted for (compaction).
    const sparse: SourceBatch = {
      span: offsetSpan('t', 0, 0, 10),
      records: [0, 1, 2, 5, 6, 9].map((o) => record(o)),
    };
    const dense = batchOf('t', 0, 20, 30);
    const empty: SourceBatch = { span: offsetSpan('t', 0, 40, 45), records: [] };
    for (const b of [sparse, dense, empty]) await sink.submit(b, b.span, anchor(b));
    await sink.flush();

    expect(sink.durableSpans({ topic: 't', partition: 0 })).toEqual([
      offsetSpan('t', 0, 0, 10),
      offsetSpan('t', 0, 20, 30),
      offsetSpan('t', 0, 40, 45),
    ]);
    const all = await readAll(sink, 't', 0);
    expect(all.records.map((r) => r.offset)).toEqual([
      0,
      1,
      2,
      5,
      6,
      9,
      ...Array.from({ length: 10 }, (_, i) => 20 + i),
    ]);
    expect(all.batches.map((b) => [b.span.start, b.span.end, b.records.length])).toEqual([
      [0, 6, 4],
      [6, 10, 2],
      [20, 24, 4],
      [24, 28, 4],
      [28, 30, 2],
      [40, 45, 0],
    ]);
    for (const b of all.batches) {
      for (const r of b.records) {
        expect(r.offset).toBeGreaterThanOrEqual(b.span.start);
        expect(r.offset).toBeLessThan(b.span.end);
      }
    }
    const window = await readAll(sink, 't', 0, 2, 23);
    expect(window.records.map((r) => r.offset)).toEqual([2, 5, 6, 9, 20, 21, 22]);
    expect(window.batches.map((b) => [b.span.start, b.span.end])).toEqual([
      [2, 10],
      [20, 23],
    ]);
    expect((await readAll(sink, 't', 0, 10, 20)).batches).toEqual([]);
    expect((await readAll(sink, 'absent', 0)).batches).toEqual([]);
    await sink.close();
  });

  it('stops reading when the signal aborts', async () => {
    const sink = await open(await tempDir(), { readChunkRecords: 2 });
    const b = batchOf('t', 0, 0, 10);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    const controller = new AbortController();
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const chunk of sink.read(b.span, controller.signal)) {
          seen.push(chunk.records.length);
          controller.abort(new Error('stop'));
        }
      })(),
    ).rejects.toThrow('stop');
    expect(seen).toEqual([2]);
    await sink.close();
  });

  it('refuses a batch whose span or offsets are wrong, naming the offset, and writes nothing', async () => {
    const dir = await tempDir();
    const target = recordingTarget();
    const sink = await open(dir, { confirm: target });
    const span = offsetSpan('t', 0, 10, 20);
    const cases: { batch: SourceBatch; submitted?: typeof span; field: string; offset?: number }[] =
      [
        {
          batch: { span, records: [record(10), record(20)] },
          field: 'batch.records[1].offset',
          offset: 20,
        },
        { batch: { span, records: [record(9)] }, field: 'batch.records[0].offset', offset: 9 },
        {
          batch: { span, records: [record(12), record(11)] },
          field: 'batch.records[1].offset',
          offset: 11,
        },
        {
          batch: { span, records: [record(12), record(12)] },
          field: 'batch.records[1].offset',
          offset: 12,
        },
        {
          batch: { span, records: [record(12)] },
          submitted: offsetSpan('t', 1, 10, 20),
          field: 'span',
        },
        {
          batch: { span, records: [record(12)] },
          submitted: offsetSpan('u', 0, 10, 20),
          field: 'span',
        },
        {
          batch: { span, records: [record(12)] },
          submitted: offsetSpan('t', 0, 10, 15),
          field: 'span',
        },
        {
          batch: { span: { topic: 't', partition: 0, start: 5, end: 5 }, records: [] },
          field: 'span.end',
        },
      ];
    for (const c of cases) {
      const submitted = c.submitted ?? c.batch.span;
      const error = await sink.submit(c.batch, submitted, NO_CONFIRM).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, c.field).toBeInstanceOf(RawSinkError);
      const e = error as RawSinkError;
      expect(e.code).toBe('TWG_RAW_BATCH_INVALID');
      expect(e.field).toBe(c.field);
      expect(e.offset).toBe(c.offset);
      if (c.offset !== undefined) expect(e.message).toContain(`offset ${c.offset}`);
    }
    // A raw anchor for another span would move the position past what raw holds.
    const b = batchOf('t', 0, 0, 5);
    await expect(sink.submit(b, b.span, rawAnchor(offsetSpan('t', 0, 0, 6)))).rejects.toThrow(
      /confirm\.span/,
    );
    await sink.flush();
    expect(sink.segments()).toEqual([]);
    expect(target.applied).toEqual([]);
    expect(await dataFiles(dir)).toEqual([]);
    await sink.close();
  });

  it('close flushes, refuses later submits and is idempotent', async () => {
    const target = recordingTarget();
    const sink = await open(await tempDir(), { confirm: target });
    const b = batchOf('t', 0, 0, 3);
    await sink.submit(b, b.span, anchor(b));
    const closing = sink.close();
    expect(sink.close()).toBe(closing);
    await closing;
    expect(target.applied).toHaveLength(1);
    const error = await sink.submit(b, b.span, anchor(b)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RawSinkError);
    expect((error as RawSinkError).code).toBe('TWG_RAW_CLOSED');
    await sink.close();
  });

  it('accepts only primary-raw confirmations (compile-time lane check)', async () => {
    const sink = await open(await tempDir());
    const b = batchOf('t', 0, 0, 1);
    // @ts-expect-error a secondary's coverage token cannot ride the primary-raw lane
    const wrongLane = () => sink.submit(b, b.span, derivedCoverage(sinkId('pg'), b.span));
    expect(typeof wrongLane).toBe('function');
    await sink.submit(b, b.span, NO_CONFIRM);
    await sink.close();
    expect(basename(sink.segments()[0]!.file)).toMatch(/^seg-\d{16}\.arrow$/);
  });
});
