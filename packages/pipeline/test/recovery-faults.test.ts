import { ManualClock, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { InMemoryCoverage, InMemoryLeaseStore, RangeSet, type Lease } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { build, keepOpen } from './doubles/harness.js';
import { ingestWithoutSecondary } from './doubles/raw-ahead.js';
import type { MemorySecondary } from './doubles/memory-sinks.js';
import { TieredCoverage } from './doubles/tiered-coverage.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

const RAW = sinkId('raw');
const SEC = sinkId('sec0');

const pause = (ms = 2) => new Promise((r) => setTimeout(r, ms));

/** Yields a batch every millisecond or so, forever: acknowledgements never pause. */
class TickingSource extends MemoryStoreSource {
  override async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    for await (const batch of super.batches(signal)) {
      yield batch;
      await pause(1);
    }
  }
}

/** A store whose reads and writes take a few milliseconds, as a real one's do. */
function slowStore(store: InMemoryCoverage, ms: number): InMemoryCoverage {
  const coverage = keepOpen(store);
  const recordDurable = coverage.recordDurable.bind(coverage);
  const covered = coverage.covered.bind(coverage);
  coverage.recordDurable = async (receipts) => {
    await pause(ms);
    await recordDurable(receipts);
  };
  coverage.covered = async (key) => {
    await pause(ms);
    return covered(key);
  };
  return coverage;
}

function only(sinks: readonly MemorySecondary[]): MemorySecondary {
  const sink = sinks[0];
  if (sink === undefined) throw new Error('no secondary');
  return sink;
}

/** A lease store whose first `failures` claims fail, as a database outage would. */
class FlakyLeaseStore extends InMemoryLeaseStore {
  constructor(public failures: number) {
    super();
  }

  override async claim(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('lease store unavailable (injected)');
    }
    return super.claim(key, holder, ttlMs);
  }
}

describe('recovery under faults', () => {
  it('stop() during a pass that finds nothing to do does not sleep out the scan interval', async () => {
    // Time moves only when the test says: the scan interval never passes.
    const clock = new ManualClock();
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 10), 10), {
      secondaries: 1,
      scheduler: clock,
      config: { recovery: { role: 'recovery', scanEveryMs: 600_000 } },
    });
    let open: () => void = () => undefined;
    built.raw.heldGate = new Promise<void>((r) => (open = r));
    const calls = built.raw.heldCalls;
    const running = built.pipeline.run();
    while (built.raw.heldCalls === calls) await pause();
    const flowCycle = clock.scheduled;
    // The pass is planning; stop() aborts it, then planning finishes with nothing to do.
    const stopping = built.pipeline.stop();
    open();
    let stopped = false;
    const outcome = await Promise.race([
      stopping.then(() => 'stopped' as const),
      // A pause scheduled after the stop is one the stop would wait out.
      until(() => stopped || clock.scheduled > flowCycle).then(() => 'paused after stop' as const),
    ]);
    stopped = true;
    expect(outcome).toBe('stopped');
    const stats = await stopping;
    await running;
    expect(stats.state).toBe('stopped');
    expect(stats.recovery?.passes).toBe(1);
  });

  it.each([
    [
      'a flush whose acknowledgements never come',
      (s: MemorySecondary) => {
        s.mode = 'manual';
      },
    ],
    [
      'a submit the sink never accepts',
      (s: MemorySecondary) => {
        s.stallSubmit = new Promise<void>(() => undefined);
      },
    ],
  ])(
    'stop() ends a window stuck on %s, claims nothing of it and releases it',
    async (_, stall) => {
      const { coverage, rawHeld } = await ingestWithoutSecondary(40);
      const leases = new InMemoryLeaseStore();
      const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
        coverage,
        rawHeld,
        leases,
        secondaries: 1,
        secondary: stall,
        config: { shutdown: { secondaryDrainMs: 20 }, recovery: { role: 'recovery' } },
      });
      const sink = only(built.secondaries);
      const running = built.pipeline.run();
      while (sink.pending.length === 0 && sink.waitingSubmits === 0) await pause();
      const stats = await built.pipeline.stop();
      await running;
      expect(stats.state).toBe('stopped');
      expect(stats.recovery?.windowsReplayed).toBe(0);
      expect((await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).ranges()).toEqual(
        [],
      );
      expect((await leases.state('sec0/t/0/0/0')).kind).toBe('free');
    },
    5_000,
  );

  it('in the both role, untilCaughtUp does not end recovery while ingest goes on', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const source = new MemoryStoreSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    const built = await build(source, {
      coverage,
      secondaries: 1,
      // The live lane fails on its first batch: everything after it is a gap.
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'both', windowRecords: 64, scanEveryMs: 5 } },
    });
    const running = built.pipeline.run({ untilCaughtUp: true });
    while (built.pipeline.stats().raw.durableRecords < 200) await pause();
    only(built.secondaries).failSubmits = false;
    const full = RangeSet.of([{ start: 0, end: 200 }]);
    while (!(await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).equals(full)) {
      await pause(5);
    }
    await built.pipeline.stop();
    await running;
    expect(only(built.secondaries).rows.size).toBe(200);
  }, 5_000);

  it('in the both role, a failing lease store leaves ingest running and recovery retrying', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const source = new MemoryStoreSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    const leases = new FlakyLeaseStore(2);
    const built = await build(source, {
      coverage,
      leases,
      secondaries: 1,
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'both', windowRecords: 64, scanEveryMs: 5 } },
    });
    const running = built.pipeline.run();
    while (built.pipeline.stats().raw.durableRecords < 200) await pause();
    only(built.secondaries).failSubmits = false;
    const full = RangeSet.of([{ start: 0, end: 200 }]);
    const repaired = async () =>
      (await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).equals(full);
    while (built.pipeline.stats().state === 'running' && !(await repaired())) await pause(5);
    expect(leases.failures).toBe(0);
    expect(built.pipeline.stats().state).toBe('running');
    const stats = await built.pipeline.stop();
    await running;
    expect(stats.state).toBe('stopped');
    expect(built.log.some((l) => l.includes('lease store unavailable (injected)'))).toBe(true);
  }, 5_000);

  it('a window the sink settles without confirming stays a gap, and is not replayed in a loop', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(40);
    const clock = new ManualClock();
    let settled = 0;
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) =>
        (s.skipConfirm = () => {
          // A second attempt at once is the loop; failing it ends the loop so the test can fail.
          if (++settled > 1) throw new Error('replayed again without a pause');
          return true;
        }),
      scheduler: clock,
      config: { recovery: { role: 'recovery', scanEveryMs: 600_000 } },
    });
    const sink = only(built.secondaries);
    const flowCycle = clock.scheduled;
    const running = built.pipeline.run();
    // The runner either pauses (a wait on the clock) or, were a pass that made
    // nothing durable not followed by a pause, replays the window again.
    await until(() => clock.scheduled > flowCycle + 1 || settled > 1);
    expect(sink.submitted).toBe(1);
    expect(settled).toBe(1);
    const stats = await built.pipeline.stop();
    await running;
    expect(stats.recovery?.windowsReplayed).toBe(0);
    expect((await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).ranges()).toEqual([]);
  }, 5_000);

  it('with leases, a window the sink did not confirm is not completed: it is retried', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(40);
    let refusing = true;
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
      coverage,
      rawHeld,
      leases: new InMemoryLeaseStore(),
      secondaries: 1,
      secondary: (s) => (s.skipConfirm = () => refusing),
      config: { recovery: { role: 'recovery', scanEveryMs: 5 } },
    });
    const running = built.pipeline.run({ untilCaughtUp: true });
    const attempted = () => {
      const r = built.pipeline.stats().recovery;
      return (r?.windowsReplayed ?? 0) + (r?.windowsFailed ?? 0) > 0;
    };
    while (!attempted()) await pause();
    // The table was fixed: the same window must be replayed again.
    refusing = false;
    await running;
    expect((await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 40 },
    ]);
  }, 5_000);

  it('in the both role, a live batch the sink never confirms does not hide later gaps', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const source = new MemoryStoreSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    let release: () => void = () => undefined;
    const built = await build(source, {
      coverage,
      secondaries: 1,
      secondary: (s) => {
        // [0, 20) is settled without confirmation; while the sink stalls the lane sheds.
        s.skipConfirm = (span) => span.start <= 5 && 5 < span.end;
        s.stallSubmit = new Promise<void>((r) => (release = r));
      },
      config: {
        secondaries: { sec0: { maxQueuedBatches: 2 } },
        recovery: { role: 'both', windowRecords: 64, scanEveryMs: 5 },
      },
    });
    const running = built.pipeline.run();
    while (built.pipeline.stats().raw.durableRecords < 200) await pause();
    const sink = only(built.secondaries);
    sink.stallSubmit = null;
    release();
    const wanted = RangeSet.of([{ start: 20, end: 200 }]);
    const covered = async () => {
      const got = await coverage.covered({ sink: SEC, topic: 't', partition: 0 });
      return RangeSet.union(got, wanted).equals(got);
    };
    while (!(await covered())) await pause(5);
    await built.pipeline.stop();
    await running;
  }, 5_000);

  it('renews a lease while the window waits on the sink, not only between batches', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(40);
    // The lease store's expiry and the renewals on one manual clock.
    const clock = new ManualClock();
    const leases = new InMemoryLeaseStore({ now: () => clock.now() });
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
      coverage,
      rawHeld,
      leases,
      secondaries: 1,
      scheduler: clock,
      // Acknowledged only when the test says so: the window's flush waits.
      secondary: (s) => (s.mode = 'manual'),
      config: { recovery: { role: 'recovery', leaseTtlMs: 400, renewEveryMs: 50 } },
    });
    const sink = only(built.secondaries);
    const running = built.pipeline.run({ untilCaughtUp: true });
    while (sink.pending.length === 0) await pause();
    const key = 'sec0/t/0/0/0';
    const states = new Set<string>();
    // Twice the TTL with the window stuck in its flush.
    for (let waited = 0; waited < 800; waited += 20) {
      states.add((await leases.state(key)).kind);
      await clock.elapse(20);
    }
    await sink.ack();
    const stats = await running;
    expect([...states]).toEqual(['held']);
    expect(stats.recovery?.windowsReplayed).toBe(1);
    // Completed (only completed keys are cleared), then forgotten by the pass that found no gap.
    expect(stats.recovery?.leasesCleared).toBe(1);
    expect((await leases.state(key)).kind).toBe('free');
  }, 5_000);

  it('in the both role, never replays what the live lane delivered while a pass was planning', async () => {
    // Coverage reads and writes take a macrotask, as a real store's do:
    // acknowledgements keep arriving while a pass writes coverage and plans.
    const store = new InMemoryCoverage({ sinks: [RAW, SEC] });
    const coverage = slowStore(store, 1);
    const source = new MemoryStoreSource(logsOf('t', 1, 2000), 10);
    source.endless = true;
    const built = await build(source, {
      coverage,
      secondaries: 1,
      config: { recovery: { role: 'both', scanEveryMs: 1 } },
    });
    const running = built.pipeline.run();
    const full = RangeSet.of([{ start: 0, end: 2000 }]);
    while (!(await store.covered({ sink: SEC, topic: 't', partition: 0 })).equals(full)) {
      await pause(5);
    }
    const stats = await built.pipeline.stop();
    await running;
    // The live lane never shed anything: there was nothing to replay.
    expect(stats.secondaries[0]?.shedBatches).toBe(0);
    expect(stats.recovery?.passes).toBeGreaterThan(1);
    expect(stats.recovery?.recordsReplayed).toBe(0);
  }, 10_000);

  it('in the both role, passes go on while acknowledgements never pause', async () => {
    const coverage = slowStore(new InMemoryCoverage({ sinks: [RAW, SEC] }), 4);
    const source = new TickingSource(logsOf('t', 1, 100_000), 10);
    const built = await build(source, {
      coverage,
      secondaries: 1,
      config: { recovery: { role: 'both', scanEveryMs: 5 } },
    });
    const running = built.pipeline.run();
    // A pass that waited for the recorder to be empty would never end while ingest runs.
    while ((built.pipeline.stats().recovery?.passes ?? 0) < 5) await pause(5);
    expect(built.pipeline.stats().source.records).toBeLessThan(100_000);
    await built.pipeline.stop();
    await running;
  }, 5_000);

  it('completes a window only once its coverage is in the durable tier', async () => {
    // A completed key is never claimed again: were the window's coverage
    // only in a local tier a lost pod takes with it, its gap would come back
    // under that same key, and no leased worker would ever replay it.
    const { coverage: durable, rawHeld } = await ingestWithoutSecondary(40);
    const durableAtCompletion: boolean[] = [];
    class CheckingLeases extends InMemoryLeaseStore {
      override async complete(lease: Lease): Promise<boolean> {
        const held = await durable.covered({ sink: SEC, topic: 't', partition: 0 });
        durableAtCompletion.push(held.covers(0, 40));
        return super.complete(lease);
      }
    }
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
      coverage: new TieredCoverage(durable, [RAW, SEC]),
      rawHeld,
      leases: new CheckingLeases(),
      secondaries: 1,
      config: { recovery: { role: 'recovery' } },
    });
    await built.pipeline.run({ untilCaughtUp: true });
    expect(durableAtCompletion).toEqual([true]);
  });
});
