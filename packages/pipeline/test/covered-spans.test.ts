import { offsetSpan, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { CoveredSpans } from '../src/covered-spans.js';
import { build } from './doubles/harness.js';
import type { MemoryRow } from './doubles/memory-sinks.js';
import { logsOf, MemoryGroupSource } from './doubles/memory-sources.js';

const SEC = sinkId('sec0');

describe('CoveredSpans', () => {
  it("seeds from the store's coverage over what raw holds, and covers only whole spans", async () => {
    const coverage = new InMemoryCoverage({ sinks: [sinkId('raw'), SEC] });
    const receipt = (start: number, end: number) => ({
      sink: SEC,
      span: offsetSpan('t', 0, start, end),
      durability: 'server-ack' as const,
      records: end - start,
      bytes: 0,
      submittedAt: 0,
      confirmedAt: 0,
    });
    await coverage.recordDurable([receipt(0, 40), receipt(60, 100)]);
    const covered = new CoveredSpans();
    await covered.seed(coverage, SEC, [
      { partition: { topic: 't', partition: 0 }, spans: [offsetSpan('t', 0, 0, 120)] },
    ]);
    expect(covered.covers(offsetSpan('t', 0, 0, 40))).toBe(true);
    expect(covered.covers(offsetSpan('t', 0, 70, 100))).toBe(true);
    expect(covered.covers(offsetSpan('t', 0, 30, 50))).toBe(false);
    expect(covered.covers(offsetSpan('t', 0, 100, 120))).toBe(false);
    expect(covered.covers(offsetSpan('t', 1, 0, 10))).toBe(false);
    covered.add(offsetSpan('t', 0, 40, 60));
    expect(covered.covers(offsetSpan('t', 0, 0, 100))).toBe(true);
  });
});

describe('live ingest re-reading what a secondary already holds', () => {
  it('after a restart behind its committed position, covered spans are not written again', async () => {
    const coverage = new InMemoryCoverage({ sinks: [sinkId('raw'), SEC] });
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const tables = [new Map<string, MemoryRow>()];
    const first = await build(new MemoryGroupSource(logsOf('t', 2, 200), 20), {
      secondaries: 1,
      coverage,
      rawHeld,
      tables,
      config: { recovery: { role: 'ingest' } },
    });
    const one = await first.pipeline.run();
    expect(one.secondaries[0]?.deliveredRecords).toBe(400);

    // The positions were lost (a new group source starts at 0, as after a
    // crash before any commit): everything is read again, raw included.
    const again = new MemoryGroupSource(logsOf('t', 2, 250), 20);
    const second = await build(again, {
      secondaries: 1,
      coverage,
      rawHeld,
      tables,
      config: { recovery: { role: 'ingest' } },
    });
    const two = await second.pipeline.run();
    const lane = two.secondaries[0];
    // Only the 100 new records reach the secondary; the 400 it held are skipped.
    expect(lane?.deliveredRecords).toBe(100);
    expect(lane?.alreadyCoveredRecords).toBe(400);
    expect(two.raw.durableRecords).toBe(500);
    expect(tables[0]?.size).toBe(500);
    const gaps = await coverage.gaps({ sink: SEC, topic: 't', partition: 1 }, 0, 250);
    expect(gaps).toEqual([]);
  });
});
