import { sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage, InMemoryLeaseStore, RangeSet } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { cut, planRecovery } from '../src/index.js';
import { build, keepOpen } from './doubles/harness.js';
import type { MemoryRow } from './doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';

const RAW = sinkId('raw');
const SEC = sinkId('sec0');

describe('recovery planning', () => {
  it('cuts gaps on a fixed grid, so every planner names a region the same way', () => {
    expect(
      cut(
        [
          { start: 5, end: 25 },
          { start: 28, end: 31 },
        ],
        10,
      ),
    ).toEqual([
      [{ start: 5, end: 10 }],
      [{ start: 10, end: 20 }],
      [
        { start: 20, end: 25 },
        { start: 28, end: 30 },
      ],
      [{ start: 30, end: 31 }],
    ]);
  });

  it('plans what each secondary lacks against raw, never beyond raw, most-lagging sink first', async () => {
    const coverage = new InMemoryCoverage({ sinks: [RAW, SEC, sinkId('sec1')] });
    const receipt = (sink: string, start: number, end: number) => ({
      sink: sinkId(sink),
      span: { topic: 't', partition: 0, start, end },
      durability: 'server-ack' as const,
      records: end - start,
      bytes: 0,
      submittedAt: 0,
      confirmedAt: 0,
    });
    await coverage.recordDurable([
      receipt('raw', 0, 100),
      receipt('sec0', 0, 40),
      receipt('sec0', 60, 150), // beyond raw: not a reason to plan anything
      receipt('sec1', 0, 90),
    ]);
    const rawHeld = [
      {
        partition: { topic: 't', partition: 0 },
        spans: [{ topic: 't', partition: 0, start: 0, end: 100 }],
      },
    ];
    const plan = await planRecovery(coverage, rawHeld, [SEC, sinkId('sec1')], 50);
    expect(plan.lagBySink).toEqual({ sec0: 20, sec1: 10 });
    expect(plan.windows.map((w) => [w.sink, w.key, w.gaps])).toEqual([
      ['sec0', 'sec0/t/0/0/40', [{ start: 40, end: 50 }]],
      ['sec0', 'sec0/t/0/1/50', [{ start: 50, end: 60 }]],
      ['sec1', 'sec1/t/0/1/90', [{ start: 90, end: 100 }]],
    ]);
    // A live lane still delivering from offset 45 keeps recovery below it; the lag still counts all.
    const live = await planRecovery(coverage, rawHeld, [SEC], 50, () => 45);
    expect(live.windows.map((w) => w.gaps)).toEqual([[{ start: 40, end: 45 }]]);
    expect(live.lagBySink).toEqual({ sec0: 20 });
  });
});

describe('recovery as a role', () => {
  it('replays into a secondary that failed during ingest, until no gap is left', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const table = new Map<string, MemoryRow>();
    const ingest = await build(new MemoryStoreSource(logsOf('t', 2, 300), 20), {
      coverage,
      rawHeld,
      tables: [table],
      secondaries: 1,
      secondary: (s) => (s.failAfter = 4),
      config: { recovery: { role: 'ingest' } },
    });
    const first = await ingest.pipeline.run();
    expect(first.secondaries[0]?.state).toBe('failed');
    expect(first.recovery).toBeNull();
    expect(table.size).toBe(80);

    const recovery = await build(new MemoryStoreSource(logsOf('t', 2, 300), 20), {
      coverage,
      rawHeld,
      tables: [table],
      secondaries: 1,
      config: { recovery: { role: 'recovery', windowRecords: 64 } },
    });
    const stats = await recovery.pipeline.run({ untilCaughtUp: true });
    // The recovery role never reads the source.
    expect(stats.source.records).toBe(0);
    expect(table.size).toBe(600);
    expect(stats.recovery?.recordsReplayed).toBe(520);
    expect(stats.recovery?.backlog).toMatchObject({ maxLagRecords: 0, unclaimedWindows: 0 });
    for (const partition of [0, 1]) {
      const covered = await coverage.covered({ sink: SEC, topic: 't', partition });
      expect(covered.equals(RangeSet.of([{ start: 0, end: 300 }]))).toBe(true);
    }
  });

  it('in both roles, repairs what a stalled lane shed once the sink moves again', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    let release: () => void = () => undefined;
    const source = new MemoryStoreSource(logsOf('t', 1, 2000), 50);
    source.endless = true;
    const built = await build(source, {
      coverage,
      secondaries: 1,
      config: {
        secondaries: { sec0: { maxQueuedBatches: 4 } },
        recovery: { role: 'both', windowRecords: 500, scanEveryMs: 10 },
      },
      secondary: (s) => {
        s.stallSubmit = new Promise<void>((r) => (release = r));
      },
    });
    const running = built.pipeline.run();
    while (built.pipeline.stats().raw.durableRecords < 2000) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(built.pipeline.stats().secondaries[0]?.shedBatches).toBeGreaterThan(0);
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    sink.stallSubmit = null;
    release();
    const releasedAt = performance.now();
    // A pass planned after the release (it records raw's coverage first) that finds nothing behind.
    const caughtUp = () => {
      const b = built.pipeline.backlog();
      return b.plannedAt !== null && b.plannedAt > releasedAt && b.maxLagRecords === 0;
    };
    while (!caughtUp()) await new Promise((r) => setTimeout(r, 10));
    await built.pipeline.stop();
    await running;
    expect(sink.rows.size).toBe(2000);
    const covered = await coverage.covered({ sink: SEC, topic: 't', partition: 0 });
    expect(covered.ranges()).toEqual([{ start: 0, end: 2000 }]);
  });

  it('splits the work between workers that share a lease store, replaying each window once', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const table = new Map<string, MemoryRow>();
    const logs = () => logsOf('t', 4, 500);
    const ingest = await build(new MemoryStoreSource(logs(), 25), {
      coverage,
      rawHeld,
      tables: [table],
      secondaries: 1,
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'ingest' } },
    });
    await ingest.pipeline.run();
    expect(table.size).toBe(0);

    const leases = new InMemoryLeaseStore();
    const worker = () =>
      build(new MemoryStoreSource(logs(), 25), {
        coverage,
        rawHeld,
        tables: [table],
        secondaries: 1,
        leases,
        secondary: (s) => (s.mode = 'auto'),
        config: {
          recovery: { role: 'recovery', windowRecords: 100, leaseTtlMs: 5000, renewEveryMs: 1000 },
        },
      });
    const [a, b] = await Promise.all([worker(), worker()]);
    const [sa, sb] = await Promise.all([
      a.pipeline.run({ untilCaughtUp: true }),
      b.pipeline.run({ untilCaughtUp: true }),
    ]);
    expect(table.size).toBe(2000);
    const replayed = (sa.recovery?.recordsReplayed ?? 0) + (sb.recovery?.recordsReplayed ?? 0);
    // Each window went to one worker while its lease was live: nothing replayed twice.
    expect(replayed).toBe(2000);
    expect(sa.recovery?.windowsReplayed).toBeGreaterThan(0);
    expect(sb.recovery?.windowsReplayed).toBeGreaterThan(0);
  });

  it('skip-dlq replays clean records only and reports the windows whose quarantine view is incomplete', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const logs = () => logsOf('t', 1, 100, (o) => (o % 25 === 0 ? 'not json' : '{}'));
    await (
      await build(new MemoryStoreSource(logs(), 10), {
        coverage,
        rawHeld,
        secondaries: 1,
        secondary: (s) => (s.failSubmits = true),
        config: { recovery: { role: 'ingest' } },
      })
    ).pipeline.run();
    const entries: string[] = [];
    const skip = await build(new MemoryStoreSource(logs(), 10), {
      coverage,
      rawHeld,
      secondaries: 1,
      quarantineWriter: async (e) => {
        entries.push(`${e.reason}@${e.record.offset}`);
      },
      config: { recovery: { role: 'recovery', windowRecords: 50, quarantine: 'skip-dlq' } },
    });
    const stats = await skip.pipeline.run({ untilCaughtUp: true });
    expect(entries).toEqual([]);
    expect(stats.recovery?.quarantineSkipped).toBe(4);
    expect(stats.recovery?.incompleteQuarantineWindows).toEqual(['sec0/t/0/0/0', 'sec0/t/0/1/50']);
    expect(skip.secondaries[0]?.rows.size).toBe(96);
  });

  it('replays what the live lane would have written: records over maxRecordBytes go to quarantine', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const logs = () =>
      logsOf('t', 1, 10, (o) => (o === 4 ? JSON.stringify({ pad: 'x'.repeat(5000) }) : '{}'));
    const config = { maxRecordBytes: 1024 };
    await (
      await build(new MemoryStoreSource(logs(), 10), {
        coverage,
        rawHeld,
        secondaries: 1,
        secondary: (s) => (s.failSubmits = true),
        config: { ...config, recovery: { role: 'ingest' } },
      })
    ).pipeline.run();
    const entries: string[] = [];
    const recovery = await build(new MemoryStoreSource(logs(), 10), {
      coverage,
      rawHeld,
      secondaries: 1,
      quarantineWriter: async (e) => {
        entries.push(`${e.reason}@${e.record.offset} ${e.record.sink}`);
      },
      config: { ...config, recovery: { role: 'recovery' } },
    });
    await recovery.pipeline.run({ untilCaughtUp: true });
    expect([...(recovery.secondaries[0]?.rows.keys() ?? [])]).not.toContain('0:4');
    expect(recovery.secondaries[0]?.rows.size).toBe(9);
    expect(entries).toEqual(['oversized@4 raw']);
    expect((await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 10 },
    ]);
  });

  it('refuses a renewal interval that is not below the lease TTL', async () => {
    await expect(
      build(new MemoryStoreSource(logsOf('t', 1, 1), 1), {
        config: { recovery: { leaseTtlMs: 1000, renewEveryMs: 1000 } },
      }),
    ).rejects.toThrow(/config\.recovery\.renewEveryMs/);
  });

  it('plans from what raw holds, not from raw coverage a crash left behind, and repairs that coverage', async () => {
    // A crash between raw's durable write and its coverage record: raw holds
    // [0, 100) of the partition, nothing of it was recorded, and the source
    // position moved past it. The secondary never got it either.
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const first = await build(new MemoryStoreSource(logsOf('t', 1, 100), 10), {
      coverage: keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] })),
      rawHeld,
      config: { recovery: { role: 'ingest' } },
    });
    await first.pipeline.run();
    const table = new Map<string, MemoryRow>();
    const recovery = await build(new MemoryStoreSource(logsOf('t', 1, 100), 10), {
      coverage,
      rawHeld,
      tables: [table],
      secondaries: 1,
      config: { recovery: { role: 'recovery', windowRecords: 64 } },
    });
    // Opening merged raw's own holdings into the store.
    expect((await coverage.covered({ sink: RAW, topic: 't', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 100 },
    ]);
    await recovery.pipeline.run({ untilCaughtUp: true });
    expect(table.size).toBe(100);
  });
});
