import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  offsetSpan,
  type ConfirmTarget,
  type OffsetSpan,
  type SourceBatch,
} from '@thalweg/connector-core';
import { RawSinkError, decodeSegment, type RawSinkEvent } from '../src/index.js';
import { segmentWorkerEntry } from '../src/segment-worker-entry.js';
import { WorkerWriter } from '../src/worker-writer.js';
import { writerOf } from '../src/writer-handle.js';
import type { RawSegmentSink } from '../src/raw-segment-sink.js';
import {
  anchor,
  batchOf,
  openSink,
  plain,
  readAll,
  record,
  recordingTarget,
  tempDir,
} from './helpers.js';

const openWorker: typeof openSink = (dir, options) =>
  openSink(dir, { writer: 'worker', ...options });

function workerOf(sink: RawSegmentSink): WorkerWriter {
  const writer = writerOf(sink);
  if (!(writer instanceof WorkerWriter)) throw new Error('expected the worker writer');
  return writer;
}

async function rejection(p: Promise<unknown>): Promise<RawSinkError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (error instanceof RawSinkError) return error;
  throw new Error(`expected a RawSinkError, got ${String(error)}`);
}

const key = (s: OffsetSpan) => `${s.topic}/${s.partition}[${s.start},${s.end})`;

/** The spans of every batch in the complete segment files of `dir`, read from disk now. */
function spansOnDisk(dir: string): Set<string> {
  const spans = new Set<string>();
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.arrow'))) {
    const path = join(dir, name);
    for (const b of decodeSegment(readFileSync(path), path).batches) spans.add(key(b.span));
  }
  return spans;
}

describe('RawSegmentSink, worker writer', () => {
  it('round-trips batches of several partitions, group-committed, confirmed in order', async () => {
    const dir = await tempDir();
    const target = recordingTarget();
    const sink = await openWorker(dir, { confirm: target });
    const batches: SourceBatch[] = [];
    for (let i = 0; i < 30; i++) {
      const topic = i % 2 === 0 ? 'orders' : 'payments';
      const partition = i % 3;
      const start = Math.floor(i / 6) * 20;
      batches.push(batchOf(topic, partition, start, start + 20));
    }
    batches.push({
      span: offsetSpan('odd', 0, 0, 10),
      records: [
        record(1, { key: null, value: new Uint8Array(0), timestamp: -1 }),
        record(5, { value: new Uint8Array(5000).fill(1), headers: [['h', new Uint8Array(64)]] }),
      ],
    });
    batches.push({ span: offsetSpan('odd', 0, 10, 20), records: [] });
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    expect(target.applied.map((a) => a.receipt.span)).toEqual(batches.map((b) => b.span));
    expect(target.applied.every((a) => a.receipt.durability === 'flush-close')).toBe(true);
    const stats = sink.stats();
    expect(stats.batchesWritten).toBe(batches.length);
    expect(stats.recordsWritten).toBe(batches.reduce((n, b) => n + b.records.length, 0));
    expect(stats.queuedBatches).toBe(0);
    for (const p of sink.partitions()) {
      const expected = batches
        .filter((b) => b.span.topic === p.topic && b.span.partition === p.partition)
        .flatMap((b) => [...b.records]);
      expect(plain((await readAll(sink, p.topic, p.partition)).records)).toEqual(plain(expected));
    }
    await sink.close();
    expect((await readdir(dir)).sort()).toEqual(
      // The lock file stays: the kernel lock was let go, the file is never deleted.
      [...sink.segments().map((s) => s.file), 'raw.manifest', 'writer.lock'].sort(),
    );
  });

  it('confirms a batch only once its segment file is complete on disk', async () => {
    const dir = await tempDir();
    const seen: { span: string; onDisk: boolean }[] = [];
    const confirm: ConfirmTarget<'primary-raw'> = {
      apply: async (_c, receipt) => {
        seen.push({ span: key(receipt.span), onDisk: spansOnDisk(dir).has(key(receipt.span)) });
      },
    };
    const sink = await openWorker(dir, { confirm });
    const batches = Array.from({ length: 40 }, (_, i) => batchOf('t', i % 4, i * 10, i * 10 + 10));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    await sink.close();
    expect(seen.map((s) => s.span)).toEqual(batches.map((b) => key(b.span)));
    expect(seen.every((s) => s.onDisk)).toBe(true);
  });

  it('holds a batch against the queue bound until it is durable (backpressure)', async () => {
    const dir = await tempDir();
    const sink = await openWorker(dir, { maxQueuedBatches: 1 });
    const batches = Array.from({ length: 5 }, (_, i) => batchOf('t', 0, i * 10, i * 10 + 10));
    for (const [i, b] of batches.entries()) {
      await sink.submit(b, b.span, anchor(b));
      expect(sink.stats().queuedBatches).toBe(1);
      // Admitted only once the one before it was reported durable.
      if (i > 0) expect(spansOnDisk(dir).has(key(batches[i - 1]!.span))).toBe(true);
    }
    await sink.flush();
    expect(sink.stats()).toMatchObject({ segmentsWritten: 5, maxBatchesPerBurst: 1 });
    await sink.close();
  });

  it('hands the thread what is admitted while it writes: one step spans segments, each confirmed on its own', async () => {
    const target = recordingTarget();
    const sink = await openWorker(await tempDir(), { confirm: target, maxBatchesPerSegment: 1 });
    const batches = Array.from({ length: 6 }, (_, i) => batchOf('t', 0, i * 10, i * 10 + 10));
    // No submit waits (the lane has room), so all six are admitted before
    // the thread can report its first segment: the step under way takes
    // them over, where a step of one segment's worth took one.
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    expect(workerOf(sink).lanes()[0]?.metrics.coalesce.max).toBeGreaterThan(1);
    expect(sink.stats()).toMatchObject({ segmentsWritten: 6, maxBatchesPerBurst: 1 });
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0, 10, 20, 30, 40, 50]);
    await sink.close();
  });

  it('close drains what was accepted, stops the thread, and refuses later submits', async () => {
    const target = recordingTarget();
    const sink = await openWorker(await tempDir(), { confirm: target });
    const batches = Array.from({ length: 8 }, (_, i) => batchOf('t', 1, i * 5, i * 5 + 5));
    for (const b of batches) await sink.submit(b, b.span, anchor(b));
    const writer = workerOf(sink);
    expect(writer.running).toBe(true);
    await sink.close();
    expect(target.applied).toHaveLength(8);
    expect(writer.running).toBe(false);
    const error = await rejection(sink.submit(batches[0]!, batches[0]!.span, anchor(batches[0]!)));
    expect(error.code).toBe('TWG_RAW_CLOSED');
    expect((await readAll(sink, 't', 1)).records).toHaveLength(40);
  });

  it('fails the sink when a write fails through its retries: names the file, confirms nothing more', async () => {
    const dir = await tempDir();
    const target = recordingTarget();
    const events: RawSinkEvent[] = [];
    const sink = await openWorker(dir, { confirm: target, onError: (e) => events.push(e) });
    const ok = batchOf('t', 0, 0, 5);
    await sink.submit(ok, ok.span, anchor(ok));
    await sink.flush();
    // The directory becomes a file: every create under it fails (ENOTDIR).
    await rm(dir, { recursive: true });
    await writeFile(dir, 'not a directory');
    const doomed = batchOf('t', 0, 5, 10);
    await sink.submit(doomed, doomed.span, anchor(doomed));

    const error = await rejection(sink.flush());
    expect(error.code).toBe('TWG_RAW_WRITE_FAILED');
    expect(error.file).toBe(join(dir, 'seg-0000000000000001.arrow'));
    expect(error.message).toContain(join(dir, 'seg-0000000000000001.arrow'));
    expect(error.message).toContain('3 attempts');
    expect(error.message).toContain('ENOTDIR');
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0]);
    expect(events.map((e) => e.kind)).toEqual(['write-retry', 'write-retry', 'failed']);
    expect(sink.stats().writeRetries).toBe(2);
    expect(sink.failed).toBe(error);
    expect(await rejection(sink.submit(doomed, doomed.span, anchor(doomed)))).toBe(error);
    expect(await rejection(sink.close())).toBe(error);
    expect(workerOf(sink).running).toBe(false);
  });

  it('fails the sink when the writer thread dies: flush rejects instead of hanging', async () => {
    const target = recordingTarget();
    const events: RawSinkEvent[] = [];
    const sink = await openWorker(await tempDir(), {
      confirm: target,
      onError: (e) => events.push(e),
    });
    const ok = batchOf('t', 0, 0, 5);
    await sink.submit(ok, ok.span, anchor(ok));
    await sink.flush();
    workerOf(sink).exitForTest(7);
    const lost = batchOf('t', 0, 5, 10);
    // Accepted (the thread has not exited yet) or refused (it has): never confirmed.
    await sink.submit(lost, lost.span, anchor(lost)).catch(() => undefined);

    const error = await rejection(sink.flush());
    expect(error.code).toBe('TWG_RAW_WRITE_FAILED');
    expect(error.message).toContain('exited with code 7');
    expect(error.message).toContain('not made durable and are not confirmed');
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0]);
    expect(events.at(-1)).toEqual({ kind: 'failed', error });
    expect(await rejection(sink.submit(lost, lost.span, anchor(lost)))).toBe(error);
    expect(await rejection(sink.close())).toBe(error);
    // What was durable before stays readable.
    expect((await readAll(sink, 't', 0)).records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps the process alive while a batch is outstanding, and not once the sink is idle', async () => {
    // A process that submits and neither flushes nor closes: it must confirm
    // the batch, then exit by itself. Runs the compiled package, as users do,
    // with flags a worker thread would refuse if it inherited them.
    const dir = await tempDir();
    const dist = new URL('.', segmentWorkerEntry()).href;
    const script = `
      import { RawSegmentSink } from '${dist}index.js';
      import { offsetSpan, sinkId, NO_CONFIRM } from '@thalweg/connector-core';
      const sink = await RawSegmentSink.open({
        id: sinkId('raw'), dir: ${JSON.stringify(dir)}, cluster: 'c', log: () => undefined,
        confirm: { apply: async (_c, r) => console.log('confirmed ' + r.span.start) },
      });
      const span = offsetSpan('t', 0, 0, 1);
      const value = Buffer.from('v');
      await sink.submit({ span, records: [{ offset: 0, key: null, value, timestamp: 0, headers: [] }] }, span, NO_CONFIRM);
      console.log('submitted');
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--trace-gc', '--input-type=module', '-e', script],
      { cwd: new URL('..', import.meta.url), timeout: 20_000 },
    );
    const lines = stdout.split('\n').filter((l) => l !== '' && !l.startsWith('[')); // not GC traces
    expect(lines).toEqual(['submitted', 'confirmed 0']);
    expect((await readdir(dir)).filter((n) => n.endsWith('.arrow'))).toHaveLength(1);
  });
});
