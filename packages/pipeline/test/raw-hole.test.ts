import { partitionKey, sinkId, type SourcePartition } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { Pipeline } from '../src/index.js';
import { MemoryRawSink } from './doubles/memory-sinks.js';
import { logsOf, MemoryGroupSource, MemoryStoreSource } from './doubles/memory-sources.js';

const RAW = sinkId('raw');
const P0: SourcePartition = { topic: 't', partition: 0 };

/**
 * What a first run left: raw held t/0 [0, 50), its coverage recorded that,
 * and the cursor stood at 50; then a repair dropped [40, 50) from raw.
 */
async function afterRepair() {
  const coverage = new InMemoryCoverage({ sinks: [RAW] });
  await coverage.merge([{ key: { sink: RAW, ...P0 }, ranges: [{ start: 0, end: 50 }] }]);
  await coverage.saveCursor({ source: 'memory', ...P0 }, { kind: 'log-offset', nextOffset: 50 });
  const stored = new Map([
    [partitionKey(P0), new Map(Array.from({ length: 40 }, (_, o) => [o, Buffer.from(`v${o}`)]))],
  ]);
  return { coverage, stored };
}

describe('a hole in raw below where the source resumes', () => {
  it('refuses the open of a store-managed source, naming the range and the way out', async () => {
    const { coverage, stored } = await afterRepair();
    const source = new MemoryStoreSource(logsOf('t', 1, 60), 10);
    const opened = Pipeline.open({
      source,
      coverage,
      log: () => undefined,
      primaryRaw: (c) => new MemoryRawSink(c, [], 'raw', stored),
    });
    await expect(opened).rejects.toMatchObject({ code: 'TWG_PIPELINE_RAW_HOLE' });
    await expect(opened).rejects.toThrow(/t\/0 \[40, 50\).*Rewind the source position to 40/);
    expect(source.closed).toBe(true);
  });

  it('opens once the cursor is rewound to the hole, and raw holds the range again', async () => {
    const { coverage, stored } = await afterRepair();
    await coverage.rewindCursor(
      { source: 'memory', ...P0 },
      { kind: 'log-offset', nextOffset: 40 },
    );
    const raw: MemoryRawSink[] = [];
    const pipeline = await Pipeline.open({
      source: new MemoryStoreSource(logsOf('t', 1, 60), 10),
      coverage,
      log: () => undefined,
      primaryRaw: (c) => {
        raw.push(new MemoryRawSink(c, [], 'raw', stored));
        return raw[0]!;
      },
    });
    await pipeline.run();
    expect(raw[0]!.holdsPrefix('t', 0, 60)).toBe(true);
  });

  it('fails the run of a broker-managed source at its first batch, before raw gets anything', async () => {
    const { coverage, stored } = await afterRepair();
    const source = new MemoryGroupSource(logsOf('t', 1, 60), 10);
    // The group's committed offset: the broker resumes the member at 50.
    (source as unknown as { next: Map<string, number> }).next.set(partitionKey(P0), 50);
    const raw: MemoryRawSink[] = [];
    const pipeline = await Pipeline.open({
      source,
      coverage,
      log: () => undefined,
      primaryRaw: (c) => {
        raw.push(new MemoryRawSink(c, [], 'raw', stored));
        return raw[0]!;
      },
    });
    await expect(pipeline.run()).rejects.toMatchObject({ code: 'TWG_PIPELINE_RAW_HOLE' });
    expect(raw[0]!.holdsPrefix('t', 0, 41)).toBe(false);
    expect([...(stored.get(partitionKey(P0))?.keys() ?? [])].every((o) => o < 40)).toBe(true);
  });
});
