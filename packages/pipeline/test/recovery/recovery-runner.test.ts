import {
  ConfigError,
  ManualClock,
  sinkId,
  type ConfirmTarget,
  type OffsetSpan,
  type SinkId,
} from '@thalweg/connector-core';
import {
  InMemoryCoverage,
  InMemoryLeaseStore,
  type DurableReceipt,
  type Lease,
  type LeaseStore,
} from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../../src/coverage-recorder.js';
import { parsePipelineConfig, type PipelineConfigInput } from '../../src/index.js';
import { BacklogMeter } from '../../src/recovery/backlog-meter.js';
import { RecoveryRunner } from '../../src/recovery/recovery-runner.js';
import { jsonRows, MemoryRawSink, MemorySecondary } from '../doubles/memory-sinks.js';
import { makeRecords } from '../doubles/memory-sources.js';
import { until } from '../doubles/waits.js';

// The runner alone: raw holds t/0 [0, 100) that the secondary never got; the
// secondary's confirm target records into its own recorder, as the live lane's does.

const RAW = sinkId('raw');
const SEC = sinkId('sec0');
const ignore: ConfirmTarget<'primary-raw'> = { apply: async () => undefined };

function setup(
  recovery: NonNullable<PipelineConfigInput['recovery']> = {},
  options: {
    leases?: LeaseStore | null;
    clock?: ManualClock;
    liveFloor?: () => number | null;
  } = {},
) {
  const clock = options.clock ?? new ManualClock();
  const config = parsePipelineConfig({
    recovery: { windowRecords: 50, scanEveryMs: 1000, ...recovery },
  }).recovery;
  const coverage = new InMemoryCoverage({ sinks: [RAW, SEC] });
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const recorder = new CoverageRecorder(coverage, log);
  const raw = new MemoryRawSink(ignore);
  raw.stored.set(
    't\u00000',
    new Map(makeRecords('t', 0, 100).map((r) => [r.offset, r.value] as const)),
  );
  const sink = new MemorySecondary(
    {
      apply: async (_confirm, receipt) => {
        recorder.add(receipt as DurableReceipt);
      },
    },
    'sec0',
  );
  const leases =
    options.leases === null
      ? undefined
      : (options.leases ?? new InMemoryLeaseStore({ now: () => clock.now() }));
  const meter = new BacklogMeter({
    raw,
    coverage,
    sinks: [SEC],
    writeHandedOver: () => recorder.writeHandedOver(),
    leases,
    windowRecords: config.windowRecords,
    clock,
    scheduler: clock,
    log,
  });
  const emptied: OffsetSpan[] = [];
  const runner = new RecoveryRunner({
    raw,
    coverage,
    targets: new Map([[SEC, { sink, derive: jsonRows }]]),
    writeHandedOver: (s: SinkId) =>
      s === SEC ? recorder.writeHandedOver() : Promise.resolve(true),
    meter,
    leases,
    holder: 'me',
    config,
    maxRecordBytes: 1 << 20,
    clock,
    scheduler: clock,
    quarantine: () => undefined,
    recordEmpty: (_sink, span) => emptied.push(span),
    liveFloor: options.liveFloor ?? (() => null),
    claim: () => () => undefined,
    log,
  });
  const covered = async () =>
    (await coverage.covered({ sink: SEC, topic: 't', partition: 0 })).ranges();
  return {
    clock,
    coverage,
    raw,
    sink,
    leases,
    meter,
    runner,
    covered,
    logs,
    abort: new AbortController(),
  };
}

describe('RecoveryRunner over a raw whose reads trail its acknowledgements', () => {
  it('a window raw does not give back whole is not completed: counted unread, planned again', async () => {
    const s = setup({}, { leases: new InMemoryLeaseStore() });
    // the first pass sees raw's rows below 30 only (its metadata lags)
    let shown = 30;
    const read = s.raw.read.bind(s.raw);
    s.raw.read = async function* (span) {
      for await (const b of read(span)) {
        const records = b.records.filter((r) => r.offset < shown);
        if (records.length === 0) continue;
        yield { span: { ...b.span, end: Math.min(b.span.end, shown) }, records };
      }
    };
    await s.runner.pass(s.abort.signal);
    expect(s.runner.stats()).toMatchObject({ windowsUnread: 2, windowsReplayed: 0 });
    expect(await s.covered()).toEqual([{ start: 0, end: 30 }]);
    expect((await s.leases?.state('sec0/t/0/0/0'))?.kind).toBe('free');
    expect(s.logs.some((l) => /raw gave back 30 of its 50 offsets/.test(l))).toBe(true);
    shown = 100;
    await s.runner.pass(s.abort.signal);
    expect(await s.covered()).toEqual([{ start: 0, end: 100 }]);
    expect(s.sink.rows.size).toBe(100);
  });

  it('checks that raw may still be read back before each pass; a refusal stops even the both role', async () => {
    const s = setup({ role: 'both' });
    let checks = 0;
    let refuse = false;
    Object.assign(s.raw, {
      verifyReadable: async () => {
        checks += 1;
        if (refuse) throw new ConfigError('raw', 'delta.enableDeletionVectors is true');
      },
    });
    await s.runner.pass(s.abort.signal);
    expect(checks).toBe(1);
    refuse = true;
    await expect(s.runner.run(s.abort.signal)).rejects.toThrow(/delta\.enableDeletionVectors/);
    expect(s.sink.rows.size).toBe(100);
  });
});

describe('RecoveryRunner', () => {
  it('a pass replays each window, writes its coverage, then completes and forgets its lease', async () => {
    const s = setup();
    expect(await s.runner.pass(s.abort.signal)).toBe(2);
    expect(await s.covered()).toEqual([{ start: 0, end: 100 }]);
    expect(s.sink.rows.size).toBe(100);
    expect(s.runner.stats()).toMatchObject({
      passes: 1,
      windowsReplayed: 2,
      recordsReplayed: 100,
      leasesCleared: 2,
      windowsFailed: 0,
    });
    expect((await s.leases?.state('sec0/t/0/0/0'))?.kind).toBe('free');
    // Nothing behind any more: the next pass finds nothing to do.
    expect(await s.runner.pass(s.abort.signal)).toBe(0);
    expect(s.meter.current().maxLagRecords).toBe(0);
  });

  it('a leased window whose gaps live ingest took over since the plan is released, not replayed', async () => {
    // Planned with no live floor (its first reading); by each window's turn,
    // live ingest offers t/0 from 25 on itself.
    let readings = 0;
    const s = setup({}, { liveFloor: () => (readings++ === 0 ? null : 25) });
    expect(await s.runner.pass(s.abort.signal)).toBe(0);
    expect(s.runner.stats()).toMatchObject({ windowsTrimmed: 2, recordsReplayed: 0 });
    expect(s.sink.rows.size).toBe(0);
    // Released, never completed: the next pass plans what is still recovery's.
    expect((await s.leases?.state('sec0/t/0/0/0'))?.kind).toBe('free');
    expect(await s.runner.pass(s.abort.signal)).toBe(1);
    expect(await s.covered()).toEqual([{ start: 0, end: 25 }]);
    expect(s.sink.rows.size).toBe(25);
  });

  it('a single worker needs no lease store', async () => {
    const s = setup({}, { leases: null });
    expect(await s.runner.pass(s.abort.signal)).toBe(2);
    expect(await s.covered()).toEqual([{ start: 0, end: 100 }]);
  });

  it('leaves a window another worker holds', async () => {
    const clock = new ManualClock();
    const leases = new InMemoryLeaseStore({ now: () => clock.now() });
    await leases.claim('sec0/t/0/0/0', 'other', 60_000);
    const s = setup({}, { leases, clock });
    expect(await s.runner.pass(s.abort.signal)).toBe(1);
    expect(await s.covered()).toEqual([{ start: 50, end: 100 }]);
    expect(s.meter.current().unclaimedWindows).toBe(1);
  });

  it('a window the sink settles without confirming is not done: released, not completed, still a gap', async () => {
    const s = setup();
    s.sink.skipConfirm = (span) => span.start < 50;
    await s.runner.pass(s.abort.signal);
    expect(await s.covered()).toEqual([{ start: 50, end: 100 }]);
    expect(s.runner.stats()).toMatchObject({ windowsReplayed: 1, windowsFailed: 1 });
    // Released, so the next pass (or another worker) claims it again.
    expect((await s.leases?.state('sec0/t/0/0/0'))?.kind).toBe('free');
    expect(s.logs.some((l) => l.includes('did not confirm all of it'))).toBe(true);
  });

  it('pauses on its scheduler between passes that found nothing, and wake() cuts the pause short', async () => {
    const s = setup({ role: 'both' });
    await s.runner.pass(s.abort.signal);
    const passes = s.runner.stats().passes;
    const running = s.runner.run(s.abort.signal);
    await until(() => s.runner.stats().passes === passes + 1 && s.clock.scheduled === 1);
    s.clock.advance(999);
    expect(s.runner.stats().passes).toBe(passes + 1);
    s.clock.advance(1);
    await until(() => s.runner.stats().passes === passes + 2 && s.clock.scheduled === 1);
    s.runner.wake();
    await until(() => s.runner.stats().passes === passes + 3);
    s.abort.abort();
    await running;
    expect(s.clock.scheduled).toBe(0);
  });

  it('with caughtUpEnds, ends after a pass that found nothing behind', async () => {
    const s = setup({ role: 'recovery' });
    await s.runner.run(s.abort.signal, () => true);
    expect(s.runner.stats().passes).toBe(2);
    expect(await s.covered()).toEqual([{ start: 0, end: 100 }]);
  });

  it("a failed pass stops a 'recovery' worker, and only costs lag in 'both'", async () => {
    class Broken extends InMemoryLeaseStore {
      failures = 1;
      override async claim(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
        if (this.failures-- > 0) throw new Error('lease store down (injected)');
        return super.claim(key, holder, ttlMs);
      }
    }
    const alone = setup({ role: 'recovery' }, { leases: new Broken() });
    await expect(alone.runner.run(alone.abort.signal)).rejects.toThrow(/lease store down/);

    const both = setup({ role: 'both' }, { leases: new Broken() });
    const running = both.runner.run(both.abort.signal);
    // The failed pass is logged, then a pause on the scheduler before the next.
    await until(() => both.clock.scheduled === 1);
    expect(both.logs.some((l) => l.includes('recovery pass failed'))).toBe(true);
    both.clock.advance(1000);
    await until(async () => (await both.covered()).length > 0 && both.runner.stats().passes >= 2);
    both.abort.abort();
    await running;
    expect(await both.covered()).toEqual([{ start: 0, end: 100 }]);
  });
});
