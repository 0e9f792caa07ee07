import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { offsetSpan, rawAnchor, sinkId, type Receipt } from '@thalweg/connector-core';
import { runDemo } from '../src/demo/run-demo.js';
import { NdjsonSegmentSink } from '../src/demo/ndjson-segment-sink.js';
import { GeneratedSource } from '../src/demo/generated-source.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'twg-cli-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('the demo topology', () => {
  it('lands every record in raw and commits each partition to its end', async () => {
    const summary = await runDemo({
      dir: await tempDir(),
      partitions: 3,
      recordsPerPartition: 1000,
      batchSize: 64,
      payloadBytes: 32,
      progress: () => undefined,
    });
    expect(summary.raw_durable).toBe(3000);
    expect(summary.raw_missing).toBe(0);
    expect(summary.committed).toEqual({ 'demo/0': 1000, 'demo/1': 1000, 'demo/2': 1000 });
    expect(summary.batches).toBe(3 * Math.ceil(1000 / 64));
  });

  it('confirms nothing when the segment cannot be made durable', async () => {
    const dir = await tempDir();
    // A file where the topic directory should be: every segment write fails.
    await writeFile(join(dir, 'demo'), 'not a directory');
    const receipts: Receipt[] = [];
    const sink = new NdjsonSegmentSink(sinkId('raw'), dir, 'generated', {
      apply: async (_c, r) => {
        receipts.push(r);
      },
    });
    const source = new GeneratedSource({
      topic: 'demo',
      partitions: 1,
      recordsPerPartition: 10,
      batchSize: 10,
      payloadBytes: 8,
    });
    for await (const b of source.batches(new AbortController().signal)) {
      await sink.submit(b, b.span, rawAnchor(b.span));
    }
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_SINK_POISON', sink: 'raw' });
    expect(receipts).toEqual([]);
    const span = offsetSpan('demo', 0, 10, 20);
    await expect(sink.submit({ span, records: [] }, span, rawAnchor(span))).rejects.toMatchObject({
      code: 'TWG_SINK_POISON',
    });
  });
});
