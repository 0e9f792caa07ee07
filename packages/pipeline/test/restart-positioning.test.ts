import { partitionKey, sinkId, type SourcePartition } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { Pipeline, secondary } from '../src/index.js';
import { jsonRows, MemoryRawSink, MemorySecondary } from './doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';

const RAW = sinkId('raw');
const P0: SourcePartition = { topic: 't', partition: 0 };

/**
 * A first run of a stream that cannot rewind left raw holding [0, 20)
 * while its cursor was committed only to 10 (a cursor lags raw). Restarted,
 * a stream that cannot resume reads a NEW stream: its rows must not be
 * numbered over the old ones raw holds. One that can resume is asked for
 * what raw lacks.
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

/** Where a resumable stream's source is sought when the pipeline opens over `afterCrash`'s raw. */
async function resumableSeeks(stored: Awaited<ReturnType<typeof afterCrash>>) {
  const source = Object.assign(new MemoryStoreSource(logsOf('t', 1, 30), 5), {
    origin: { kind: 'non-replayable', resumable: true } as const,
  });
  await Pipeline.open({
    source,
    coverage: stored.coverage,
    log: () => undefined,
    primaryRaw: (c) => new MemoryRawSink(c, [], 'raw', stored.stored),
  });
  return source.seeks;
}

describe('a stream that cannot rewind, started again', () => {
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

  it('asks a resumable one for the row after what raw holds, keeping its cursor (ADR 0043)', async () => {
    // Raw holds [0, 20): the producer would send 10..19 again, each a second copy.
    expect(await resumableSeeks(await afterCrash())).toEqual([
      { partition: P0, cursor: { kind: 'log-offset', nextOffset: 20 } },
    ]);
  });

  it('resumes a resumable one at a hole in raw past its cursor, not beyond it', async () => {
    const crashed = await afterCrash();
    crashed.stored.get(partitionKey(P0))?.delete(15);
    crashed.stored.get(partitionKey(P0))?.delete(16);
    expect(await resumableSeeks(crashed)).toEqual([
      { partition: P0, cursor: { kind: 'log-offset', nextOffset: 15 } },
    ]);
  });

  it('delivers the rows it does not ask for again to the secondaries by recovery from raw', async () => {
    const SEC = sinkId('sec');
    const coverage = new InMemoryCoverage({ sinks: [RAW, SEC] });
    await coverage.merge([
      { key: { sink: RAW, ...P0 }, ranges: [{ start: 0, end: 20 }] },
      { key: { sink: SEC, ...P0 }, ranges: [{ start: 0, end: 10 }] },
    ]);
    await coverage.saveCursor({ source: 'memory', ...P0 }, { kind: 'log-offset', nextOffset: 10 });
    const value = (o: number) => JSON.stringify({ n: o, p: 0 });
    const stored = new Map([
      [partitionKey(P0), new Map(Array.from({ length: 20 }, (_, o) => [o, Buffer.from(value(o))]))],
    ]);
    const source = Object.assign(new MemoryStoreSource(logsOf('t', 1, 30, value), 5), {
      origin: { kind: 'non-replayable', resumable: true } as const,
    });
    const sec = new Map<string, { offset: number; text: string }>();
    const pipeline = await Pipeline.open({
      source,
      coverage,
      log: () => undefined,
      primaryRaw: (c) => new MemoryRawSink(c, [], 'raw', stored),
      secondaries: [
        secondary({
          open: (c) => new MemorySecondary(c, 'sec', undefined, [], sec),
          derive: jsonRows,
        }),
      ],
    });
    const stats = await pipeline.run({ untilCaughtUp: true });
    // Read live: only 20..29; 10..19 came from raw, replayed.
    expect(stats.source.records).toBe(10);
    expect([...sec.keys()].sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)))).toEqual(
      Array.from({ length: 20 }, (_, i) => `0:${i + 10}`),
    );
  });
});
