import { open, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RawSinkError } from '@thalweg/sink-files';
import { describe, expect, it } from 'vitest';
import { anchor, batchOf, countingTarget, openSink, readAll, record, tempDir } from './helpers.js';

async function write(dir: string, spans: [number, number][], topic = 't'): Promise<void> {
  const sink = await openSink(dir);
  for (const [start, end] of spans) {
    const b = batchOf(topic, 0, start, end);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
  }
  await sink.close();
}

describe('Parquet sink', () => {
  it('reads written batches back by offset window, trimmed to it, each record as delivered', async () => {
    const dir = await tempDir();
    const target = countingTarget();
    const sink = await openSink(dir, { confirm: target });
    for (const [start, end] of [
      [0, 10],
      [10, 20],
      [30, 40],
    ] as const) {
      const b = batchOf('t', 0, start, end);
      await sink.submit(b, b.span, anchor(b));
    }
    await sink.flush();
    expect(target.applied).toBe(3);
    expect(sink.descriptor).toMatchObject({
      kind: 'parquet-files',
      durability: { kind: 'flush-close' },
      recovery: { kind: 'readable' },
    });
    const read = await readAll(sink, 't', 0, 5, 35);
    expect(read.offsets).toEqual([...range(5, 20), ...range(30, 35)]);
    expect(read.batches.map((b) => [b.span.start, b.span.end])).toEqual([
      [5, 20],
      [30, 35],
    ]);
    const [first] = read.batches[0]?.records ?? [];
    expect(first).toMatchObject({ offset: 5, key: null, timestamp: record(5).timestamp });
    expect(Buffer.from(read.batches[0]?.records[1]?.key ?? []).toString()).toBe('k6');
    expect(
      read.batches[0]?.records[1]?.headers.map(([k, v]) => [k, Buffer.from(v ?? []).toString()]),
    ).toEqual([['trace', 't6']]);
    expect((await sink.held())[0]?.spans.map((s) => [s.start, s.end])).toEqual([
      [0, 20],
      [30, 40],
    ]);
    expect((await readdir(dir)).filter((n) => n.endsWith('.parquet')).length).toBeGreaterThan(0);
    await sink.close();
  });

  it('does not hold a torn file that was never renamed into place, and deletes it on open', async () => {
    const dir = await tempDir();
    await write(dir, [[0, 10]]);
    const [file] = (await readdir(dir)).filter((n) => n.endsWith('.parquet'));
    const bytes = await readFile(join(dir, file ?? ''));
    await writeFile(join(dir, '.seg-0000000000000001.1.tmp'), bytes.subarray(0, bytes.length >> 1));
    const sink = await openSink(dir);
    expect((await sink.held())[0]?.spans.map((s) => [s.start, s.end])).toEqual([[0, 10]]);
    expect((await readdir(dir)).some((n) => n.endsWith('.tmp'))).toBe(false);
    await sink.close();
  });

  it('refuses a file with one flipped byte on read, naming the file and the reason', async () => {
    const dir = await tempDir();
    await write(dir, [[0, 10]]);
    const [file] = (await readdir(dir)).filter((n) => n.endsWith('.parquet'));
    const path = join(dir, file ?? '');
    const handle = await open(path, 'r+');
    const one = Buffer.alloc(1);
    await handle.read(one, 0, 1, 40);
    one[0] = (one[0] ?? 0) ^ 0xff;
    await handle.write(one, 0, 1, 40);
    await handle.close();
    const sink = await openSink(dir);
    const error = await readAll(sink, 't', 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RawSinkError);
    expect((error as RawSinkError).code).toBe('TWG_RAW_CHECKSUM_MISMATCH');
    expect((error as RawSinkError).message).toContain(path);
    expect((error as RawSinkError).message).toContain('the Parquet file fails its checksum');
    await sink.close();
  });

  it('sees exactly the durable files after a restart, and goes on writing after them', async () => {
    const dir = await tempDir();
    await write(dir, [
      [0, 5],
      [5, 9],
    ]);
    const sink = await openSink(dir);
    expect((await sink.held())[0]?.spans.map((s) => [s.start, s.end])).toEqual([[0, 9]]);
    const b = batchOf('t', 0, 9, 12);
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
    expect((await readAll(sink, 't', 0)).offsets).toEqual(range(0, 12));
    expect(sink.segments().map((s) => s.file)).toEqual([
      'seg-0000000000000000.parquet',
      'seg-0000000000000001.parquet',
      'seg-0000000000000002.parquet',
    ]);
    await sink.close();
  });
});

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}
