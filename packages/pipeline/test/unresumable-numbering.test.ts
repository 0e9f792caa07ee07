import { partitionKey, sinkId, type SourcePartition } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { Pipeline } from '../src/index.js';
import { MemoryRawSink } from './doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';

const RAW = sinkId('raw');
const P0: SourcePartition = { topic: 't', partition: 0 };

/**
 * A first run of a stream that can neither rewind nor resume left raw
 * holding [0, 20) while its cursor was committed only to 10 (a cursor lags
 * raw). The restarted source reads a NEW stream: its rows must not be
 * numbered over the old ones raw holds.
 */
async function afterCrash() {
  const coverage = new InMemoryCoverage({ sinks: [RAW] });
  await coverage.merge([{ key: { sink: RAW, ...P0 }, ranges: [{ start: 0, end: 20 }] }]);
  await coverage.saveCursor({ source: 'memory', ...P0 }, { kind: 'log-offset', nextOffset: 10 });
  const stored = new Map([
    [partitionKey(P0), new Map(Array.from({ length: 20 }, (_, o) => [o, Buffer.from(`old${o}`)]))],
  ]);
  return { coverage, stored };
}

describe('a stream that can neither rewind nor resume, started again', () => {
  it('numbers its rows on from past what raw holds, not from the lagging cursor', async () => {
    const { coverage, stored } = await afterCrash();
    const source = Object.assign(new MemoryStoreSource(logsOf('t', 1, 30), 5), {
      origin: { kind: 'non-replayable', resumable: false } as const,
    });
    const pipeline = await Pipeline.open({
      source,
      coverage,
      config: { acceptLossWindow: 'records-received-not-yet-durable-in-raw' },
      log: () => undefined,
      primaryRaw: (c) => new MemoryRawSink(c, [], 'raw', stored),
    });
    expect(source.seeks).toEqual([
      { partition: P0, cursor: { kind: 'log-offset', nextOffset: 20 } },
    ]);
    await pipeline.run();
    // The old rows are still raw's; the new stream went on at 20.
    expect(Buffer.from(stored.get(partitionKey(P0))?.get(19) ?? []).toString()).toBe('old19');
    expect(stored.get(partitionKey(P0))?.has(29)).toBe(true);
  });

  it('keeps the cursor of a resumable one, whose producer sends those rows again', async () => {
    const { coverage, stored } = await afterCrash();
    const source = Object.assign(new MemoryStoreSource(logsOf('t', 1, 30), 5), {
      origin: { kind: 'non-replayable', resumable: true } as const,
    });
    await Pipeline.open({
      source,
      coverage,
      log: () => undefined,
      primaryRaw: (c) => new MemoryRawSink(c, [], 'raw', stored),
    });
    expect(source.seeks).toEqual([
      { partition: P0, cursor: { kind: 'log-offset', nextOffset: 10 } },
    ]);
  });
});
