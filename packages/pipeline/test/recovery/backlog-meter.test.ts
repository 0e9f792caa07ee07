import { ManualClock, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage, InMemoryLeaseStore, RangeSet } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { coverageReport, type PipelineConfigInput } from '../../src/index.js';
import { BacklogMeter, NO_BACKLOG } from '../../src/recovery/backlog-meter.js';
import { build, keepOpen } from '../doubles/harness.js';
import { MemoryRawSink } from '../doubles/memory-sinks.js';
import { logsOf, makeRecords, MemoryStoreSource } from '../doubles/memory-sources.js';

const RAW = sinkId('raw');
const SEC = sinkId('sec0');

const pause = (ms = 2) => new Promise((r) => setTimeout(r, ms));

/** What `thalweg coverage` reports per secondary for this store: the reference. */
async function reported(coverage: InMemoryCoverage): Promise<Record<string, number>> {
  const report = await coverageReport(coverage, RAW, [SEC]);
  return Object.fromEntries(report.filter((s) => !s.isRaw).map((s) => [s.sink, s.lagRecords]));
}

/** Two partitions of 300; the secondary takes 4 batches, then fails: its lane sheds the rest. */
async function shedding(role: 'ingest' | 'both' | 'recovery', config: PipelineConfigInput = {}) {
  const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
  /** What raw holds, for a later run over the same raw. */
  const rawHeld = new Map<string, Map<number, Uint8Array>>();
  const built = await build(new MemoryStoreSource(logsOf('t', 2, 300), 20), {
    coverage,
    rawHeld,
    secondaries: 1,
    secondary: (s) => (s.failAfter = 4),
    // One pass at the start (nothing read yet), none after: the backlog of
    // the old code stayed what that pass measured.
    config: { ...config, recovery: { role, scanEveryMs: 60_000 } },
  });
  return { coverage, rawHeld, built };
}

describe('the backlog agrees with the coverage report', () => {
  it('in the both role, after a run whose lane shed, backlog() is what coverageReport reads', async () => {
    const { coverage, built } = await shedding('both');
    const stats = await built.pipeline.run();
    expect(stats.secondaries[0]?.shedRecords).toBeGreaterThan(0);
    const expected = await reported(coverage);
    expect(expected[SEC]).toBeGreaterThan(0);
    const backlog = built.pipeline.backlog();
    expect(backlog.lagBySink).toEqual(expected);
    expect(backlog.maxLagRecords).toBe(expected[SEC]);
    expect(backlog.unclaimedWindows).toBeGreaterThan(0);
    // The recovery stats carry the same numbers.
    expect(stats.recovery?.backlog).toEqual(backlog);
  });

  it('in the ingest role too, at the end of the run and while it runs', async () => {
    const { coverage, built } = await shedding('ingest');
    const stats = await built.pipeline.run();
    expect(stats.recovery).toBeNull();
    const expected = await reported(coverage);
    expect(expected[SEC]).toBeGreaterThan(0);
    expect(built.pipeline.backlog().lagBySink).toEqual(expected);
    expect(built.pipeline.backlog().maxLagRecords).toBe(expected[SEC]);

    // While it runs: sampled on the scan interval, no recovery pass needed.
    const live = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const source = new MemoryStoreSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    const running = await build(source, {
      coverage: live,
      secondaries: 1,
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'ingest', scanEveryMs: 5 } },
    });
    const done = running.pipeline.run();
    while (running.pipeline.backlog().maxLagRecords < 200) await pause();
    expect(running.pipeline.backlog().lagBySink).toEqual({ sec0: 200 });
    await running.pipeline.stop();
    await done;
  });

  it('in the recovery role, the stats after the run are the report of the store', async () => {
    const { coverage, rawHeld, built } = await shedding('ingest');
    await built.pipeline.run();
    const recovery = await build(new MemoryStoreSource(logsOf('t', 2, 300), 20), {
      coverage,
      rawHeld,
      secondaries: 1,
      // The sink refuses every replay: recovery runs a pass and the gaps stay.
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'recovery', scanEveryMs: 60_000 } },
    });
    const running = recovery.pipeline.run();
    while ((recovery.pipeline.stats().recovery?.passes ?? 0) < 1) await pause();
    const stats = await recovery.pipeline.stop();
    await running;
    const expected = await reported(coverage);
    expect(expected[SEC]).toBeGreaterThan(0);
    expect(stats.recovery?.backlog.lagBySink).toEqual(expected);
  });
});

describe('run({ untilCaughtUp: true })', () => {
  it('in the both role, recovers after the source ended until no gap is left', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const built = await build(new MemoryStoreSource(logsOf('t', 2, 300), 20), {
      coverage,
      secondaries: 1,
      // The live lane fails on its first batch: everything is a gap, until
      // the sink takes writes again, which recovery then replays through.
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'both', windowRecords: 64, scanEveryMs: 5 } },
    });
    const running = built.pipeline.run({ untilCaughtUp: true });
    while (built.pipeline.stats().raw.durableRecords < 600) await pause();
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    sink.failSubmits = false;
    // Resolves on its own: no stop().
    const stats = await running;
    expect(sink.rows.size).toBe(600);
    expect(stats.recovery?.backlog.maxLagRecords).toBe(0);
    expect(await reported(coverage)).toEqual({ sec0: 0 });
    for (const partition of [0, 1]) {
      const covered = await coverage.covered({ sink: SEC, topic: 't', partition });
      expect(covered.equals(RangeSet.of([{ start: 0, end: 300 }]))).toBe(true);
    }
  });

  it('is refused in the ingest role, which never recovers, and the pipeline still stops', async () => {
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
      secondaries: 1,
      config: { recovery: { role: 'ingest' } },
    });
    const refused = built.pipeline.run({ untilCaughtUp: true });
    await expect(refused).rejects.toMatchObject({ code: 'TWG_PIPELINE_TOPOLOGY_INVALID' });
    await expect(refused).rejects.toThrow(/recovery\.role is 'ingest'/);
    const stats = await built.pipeline.stop();
    expect(stats.state).toBe('stopped');
  });
});

describe('completed lease keys', () => {
  it('are cleared by recovery once their coverage is durable, so the lease store does not grow', async () => {
    const { coverage, rawHeld, built } = await shedding('ingest');
    await built.pipeline.run();
    const leases = new InMemoryLeaseStore();
    const worker = () =>
      build(new MemoryStoreSource(logsOf('t', 2, 300), 20), {
        coverage,
        rawHeld,
        leases,
        secondaries: 1,
        config: {
          recovery: { role: 'recovery', windowRecords: 32, leaseTtlMs: 5000, renewEveryMs: 1000 },
        },
      });
    const [a, b] = await Promise.all([worker(), worker()]);
    const [sa, sb] = await Promise.all([
      a.pipeline.run({ untilCaughtUp: true }),
      b.pipeline.run({ untilCaughtUp: true }),
    ]);
    const replayed = (sa.recovery?.windowsReplayed ?? 0) + (sb.recovery?.windowsReplayed ?? 0);
    const cleared = (sa.recovery?.leasesCleared ?? 0) + (sb.recovery?.leasesCleared ?? 0);
    expect(replayed).toBeGreaterThan(4);
    // Every window completed was forgotten again (a window another worker
    // claims from an older plan is found covered, completed and cleared
    // once more, never replayed: see recordsReplayed below).
    expect(cleared).toBeGreaterThanOrEqual(replayed);
    expect(await leases.list('')).toEqual([]);
    expect((sa.recovery?.recordsReplayed ?? 0) + (sb.recovery?.recordsReplayed ?? 0)).toBe(
      600 - 80,
    );
    expect(await reported(coverage)).toEqual({ sec0: 0 });
  });
});

describe('backlog() cannot lie', () => {
  /** A meter over a raw holding t/0 [0, 100) that the secondary has none of. */
  function meter(leases: InMemoryLeaseStore | undefined) {
    const coverage = new InMemoryCoverage({ sinks: [RAW, SEC] });
    const raw = new MemoryRawSink({ apply: async () => undefined });
    raw.stored.set(
      't\u00000',
      new Map(makeRecords('t', 0, 100).map((r) => [r.offset, r.value] as const)),
    );
    const clock = new ManualClock(7);
    return new BacklogMeter({
      raw,
      coverage,
      sinks: [SEC],
      writeHandedOver: async () => true,
      leases,
      windowRecords: 50,
      clock,
      scheduler: clock,
      log: () => undefined,
    });
  }

  it('every field is measured: windows, the unclaimed ones, the lag per sink, when', async () => {
    expect(NO_BACKLOG.plannedAt).toBeNull();
    const leases = new InMemoryLeaseStore();
    const m = meter(leases);
    expect(m.current()).toEqual(NO_BACKLOG);
    const plan = await m.sample(() => null);
    expect(plan.windows.map((w) => w.key)).toEqual(['sec0/t/0/0/0', 'sec0/t/0/1/50']);
    expect(m.current()).toEqual({
      unclaimedWindows: 2,
      maxLagRecords: 100,
      lagBySink: { sec0: 100 },
      rawUnreadRecords: 0,
      plannedAt: 7,
    });
    // A window another worker holds is claimed: one fewer.
    await leases.claim('sec0/t/0/1/50', 'another worker', 60_000);
    await m.sample(() => null);
    expect(m.current().unclaimedWindows).toBe(1);
    expect(m.current().maxLagRecords).toBe(100);
  });

  it('counts what raw recorded as acknowledged and does not show yet (a lakehouse raw trailing its acks)', async () => {
    const coverage = new InMemoryCoverage({ sinks: [RAW, SEC] });
    await coverage.merge([
      { key: { sink: RAW, topic: 't', partition: 0 }, ranges: [{ start: 0, end: 140 }] },
      { key: { sink: RAW, topic: 't', partition: 1 }, ranges: [{ start: 0, end: 5 }] },
    ]);
    const raw = new MemoryRawSink({ apply: async () => undefined });
    raw.stored.set(
      't\u00000',
      new Map(makeRecords('t', 0, 100).map((r) => [r.offset, r.value] as const)),
    );
    const clock = new ManualClock(0);
    const m = new BacklogMeter({
      raw,
      coverage,
      sinks: [SEC],
      writeHandedOver: async () => true,
      leases: undefined,
      windowRecords: 50,
      clock,
      scheduler: clock,
      log: () => undefined,
    });
    await m.sample(() => null);
    // t/0 [100, 140) and all of t/1, which raw shows nothing of yet
    expect(m.current().rawUnreadRecords).toBe(45);
  });

  it('with no lease store every window is unclaimed', async () => {
    const m = meter(undefined);
    await m.sample(() => null);
    expect(m.current().unclaimedWindows).toBe(2);
  });
});
