import { offsetSpan, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../src/coverage-recorder.js';
import { CoveredSpans } from '../src/covered-spans.js';
import { resolveLaneSettings } from '../src/pipeline-config.js';
import { SecondaryLane } from '../src/secondary-lane.js';
import { build } from './doubles/harness.js';
import { jsonRows, MemorySecondary, type MemoryRow } from './doubles/memory-sinks.js';
import { logsOf, makeRecords, MemoryGroupSource } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

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

  it('splits a span into what the sink holds, what recovery replays now, and the rest', () => {
    const covered = new CoveredSpans();
    covered.add(offsetSpan('t', 0, 0, 30));
    const P = { topic: 't', partition: 0 };
    covered.claim(P, [
      { start: 40, end: 50 },
      { start: 60, end: 70 },
    ]);
    expect(covered.split(offsetSpan('t', 0, 20, 80))).toEqual({
      covered: [{ start: 20, end: 30 }],
      claimed: [
        { start: 40, end: 50 },
        { start: 60, end: 70 },
      ],
      missing: [
        { start: 30, end: 40 },
        { start: 50, end: 60 },
        { start: 70, end: 80 },
      ],
    });
    // Released: the claimed ranges are missing again (a claim is never coverage).
    covered.release(P, [
      { start: 40, end: 50 },
      { start: 60, end: 70 },
    ]);
    expect(covered.split(offsetSpan('t', 0, 20, 80)).missing).toEqual([{ start: 30, end: 80 }]);
    expect(covered.covers(offsetSpan('t', 0, 40, 50))).toBe(false);
  });
});

describe('a live lane offered a batch its sink holds in part', () => {
  it('submits only the rest, and counts what it left out', async () => {
    const coverage = new InMemoryCoverage({ sinks: [SEC] });
    const covered = new CoveredSpans();
    covered.add(offsetSpan('t', 0, 0, 30));
    covered.claim({ topic: 't', partition: 0 }, [{ start: 50, end: 60 }]);
    const lane = new SecondaryLane(
      'secondaries[0]',
      jsonRows,
      new CoverageRecorder(coverage, () => undefined),
      () => undefined,
      () => undefined,
      covered,
    );
    const sink = new MemorySecondary(lane.target, 'sec0');
    lane.start(sink, resolveLaneSettings({}));
    const records = makeRecords('t', 0, 80);
    lane.offer({ span: offsetSpan('t', 0, 20, 80), records: records.slice(20, 80) });
    await until(() => lane.stats().submittedBatches > 0 && lane.stats().queuedBatches === 0);
    await until(() => lane.pendingFloor({ topic: 't', partition: 0 }) === null);
    await sink.flush();
    expect([...sink.writes.keys()]).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `0:${30 + i}`),
      ...Array.from({ length: 20 }, (_, i) => `0:${60 + i}`),
    ]);
    expect(lane.stats()).toMatchObject({
      submittedBatches: 2,
      alreadyCoveredBatches: 0,
      alreadyCoveredRecords: 10,
      replayingRecords: 10,
    });
    await lane.stop(1_000);
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
