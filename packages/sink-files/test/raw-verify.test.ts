import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offsetSpan } from '@thalweg/connector-core';
import { checkRaw, repairRaw, segmentName } from '../src/index.js';
import { anchor, batchOf, openSink, readAll, tempDir } from './helpers.js';

/** Four segments: t/0 [0, 10), [10, 20), [20, 30) and t/1 [0, 5). */
async function fourSegments(dir: string) {
  const sink = await openSink(dir);
  for (const b of [
    batchOf('t', 0, 0, 10),
    batchOf('t', 0, 10, 20),
    batchOf('t', 0, 20, 30),
    batchOf('t', 1, 0, 5),
  ]) {
    await sink.submit(b, b.span, anchor(b));
    await sink.flush();
  }
  await sink.close();
}

async function flipValueByte(file: string, text: string) {
  const bytes = await readFile(file);
  const at = bytes.indexOf(text);
  bytes[at] = (bytes[at] as number) ^ 0x20;
  await writeFile(file, bytes);
  return at;
}

describe('checkRaw (thalweg raw verify)', () => {
  it('reports nothing wrong with sound raw, and what it holds', async () => {
    const dir = await tempDir();
    await fourSegments(dir);
    const check = await checkRaw(dir, { checksums: true });
    expect(check.damage).toEqual([]);
    expect(check.segments).toBe(4);
    expect(check.partitions.map((p) => [p.partition, p.held, p.holes])).toEqual([
      [{ topic: 't', partition: 0 }, [{ start: 0, end: 30 }], []],
      [{ topic: 't', partition: 1 }, [{ start: 0, end: 5 }], []],
    ]);
  });

  it('reports a flipped byte by file, position and range, and a deleted segment as a hole', async () => {
    const dir = await tempDir();
    await fourSegments(dir);
    const at = await flipValueByte(join(dir, segmentName(1)), 'value-15');
    await rm(join(dir, segmentName(2)));
    const quick = await checkRaw(dir, { checksums: false });
    expect(quick.damage.map((d) => d.code)).toEqual(['TWG_RAW_SEGMENT_MISSING']);
    const check = await checkRaw(dir, { checksums: true });
    expect(check.damage.map((d) => [d.code, d.file, d.spans])).toEqual([
      ['TWG_RAW_SEGMENT_MISSING', join(dir, segmentName(2)), [offsetSpan('t', 0, 20, 30)]],
      ['TWG_RAW_CHECKSUM_MISMATCH', join(dir, segmentName(1)), [offsetSpan('t', 0, 10, 20)]],
    ]);
    expect(check.damage[1]!.position).toBeLessThanOrEqual(at);
    expect(check.partitions[0]!.holes).toEqual([{ start: 10, end: 30 }]);
  });

  it('repairs: drops damaged and missing segments, moves the damaged aside, and raw opens claiming only what it holds', async () => {
    const dir = await tempDir();
    await fourSegments(dir);
    await flipValueByte(join(dir, segmentName(1)), 'value-15');
    await rm(join(dir, segmentName(3)));
    const repair = await repairRaw(dir);
    expect(repair.movedAside).toEqual([segmentName(1)]);
    expect(repair.dropped).toEqual([offsetSpan('t', 0, 10, 20), offsetSpan('t', 1, 0, 5)]);
    expect(await readdir(join(dir, 'damaged'))).toEqual([segmentName(1)]);
    const sink = await openSink(dir);
    expect(sink.durableSpans({ topic: 't', partition: 0 })).toEqual([
      offsetSpan('t', 0, 0, 10),
      offsetSpan('t', 0, 20, 30),
    ]);
    // The source re-reads the hole: raw is whole again.
    const again = batchOf('t', 0, 10, 20);
    await sink.submit(again, again.span, anchor(again));
    await sink.flush();
    expect((await readAll(sink, 't', 0)).records).toHaveLength(30);
    await sink.close();
    expect((await checkRaw(dir, { checksums: true })).damage).toEqual([]);
  });
});
