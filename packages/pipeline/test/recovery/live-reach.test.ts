import { ManualClock, partitionKey, sinkId } from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { LiveReach } from '../../src/recovery/live-reach.js';
import { build } from '../doubles/harness.js';
import type { MemorySecondary } from '../doubles/memory-sinks.js';
import { logsOf, MemoryGroupSource, MemoryStoreSource } from '../doubles/memory-sources.js';
import { ingestWithoutSecondary } from '../doubles/raw-ahead.js';
import { until } from '../doubles/waits.js';

const SEC = sinkId('sec0');
const P0 = { topic: 't', partition: 0 };
const P1 = { topic: 't', partition: 1 };
/** Long enough never to run out in a test: only what the test does hands a gap to recovery. */
const NEVER = 3_600_000;

describe('LiveReach', () => {
  it('leaves to live what it will read again, and hands back what it will not', () => {
    const clock = new ManualClock();
    const reach = new LiveReach(clock, 1_000);
    // Where a broker-managed partition resumes is not known before its first piece.
    reach.assigned(P0);
    expect(reach.floor(P0)).toBeNull();
    reach.offered(P0, 40);
    expect(reach.floor(P0)).toBe(40);
    expect(reach.floor(P1)).toBeNull();
    clock.advance(1_000);
    expect(reach.floor(P0)).toBe(40);
    // Not moved for longer than the grace: recovery's again.
    clock.advance(1);
    expect(reach.floor(P0)).toBeNull();
    reach.offered(P0, 60);
    expect(reach.floor(P0)).toBe(60);
    reach.revokedFrom(P0);
    expect(reach.floor(P0)).toBeNull();
    // A piece of the old assignment offered after the revocation moves nothing.
    reach.offered(P0, 80);
    expect(reach.floor(P0)).toBeNull();
    reach.assigned(P0);
    reach.offered(P0, 20);
    expect(reach.floor(P0)).toBe(20);
    reach.end();
    expect(reach.floor(P0)).toBeNull();
  });

  it('a store-managed partition is known from open', () => {
    const reach = new LiveReach(new ManualClock(), 1_000);
    reach.resumeAt(P0, 25);
    expect(reach.floor(P0)).toBe(25);
  });
});

/** Every row of the secondary made durable exactly once, and how many there are. */
function writesOnce(sink: MemorySecondary): { rows: number; twice: number } {
  const counts = [...sink.writes.values()];
  return { rows: counts.length, twice: counts.filter((n) => n > 1).length };
}

async function gapsOf(coverage: CoverageStore, partition: number, end: number) {
  return coverage.gaps({ sink: SEC, topic: 't', partition }, 0, end);
}

describe('after a restart behind raw, in the both role', () => {
  it('a gap recovery replays before live ingest knows where it resumes is not offered live too', async () => {
    // Raw holds [0, 200) the secondary never got; the source resumes at 0 (its committed position).
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    let join: () => void = () => undefined;
    source.joining = new Promise<void>((r) => (join = r));
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) => (s.mode = 'manual'),
      config: { recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: NEVER } },
    });
    const run = built.pipeline.run();
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    // Recovery's first pass plans while the group is still joining (nothing
    // says where it resumes), and submits before it waits for the sink.
    await until(() => sink.submitted === 1);
    // Then live ingest re-reads the same range while the replay is unconfirmed.
    join();
    await until(() => built.pipeline.stats().source.records === 200);
    sink.mode = 'auto';
    await sink.ack();
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(writesOnce(sink)).toEqual({ rows: 200, twice: 0 });
    expect(stats.recovery?.recordsReplayed).toBe(200);
    expect(stats.secondaries[0]).toMatchObject({ submittedBatches: 0, replayingRecords: 200 });
  });

  it('a window planned before the live lane delivered its span is not replayed when its turn comes', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    let join: () => void = () => undefined;
    source.joining = new Promise<void>((r) => (join = r));
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) => (s.mode = 'manual'),
      config: {
        recovery: { role: 'both', windowRecords: 40, scanEveryMs: 10, liveGraceMs: NEVER },
      },
    });
    const run = built.pipeline.run();
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    // The first pass plans five windows while the group joins, and replays the first.
    await until(() => sink.submitted === 1);
    join();
    // Live ingest skips what that replay claims and delivers the rest.
    await until(() => built.pipeline.stats().secondaries[0]?.submittedBatches === 8);
    sink.mode = 'auto';
    await sink.ack();
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(writesOnce(sink)).toEqual({ rows: 200, twice: 0 });
    expect(stats.recovery).toMatchObject({ recordsReplayed: 40, windowsTrimmed: 4 });
  });

  it('a gap past where live ingest resumes is left to the live lane, below it to recovery', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    // The stored cursor lags raw: the source resumes at 120 and reads [120, 200) again.
    await coverage.rewindCursor(
      { source: 'memory', topic: 't', partition: 0 },
      { kind: 'log-offset', nextOffset: 120 },
    );
    const source = new MemoryStoreSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      config: { recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: NEVER } },
    });
    const run = built.pipeline.run();
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    expect(writesOnce(sink)).toEqual({ rows: 200, twice: 0 });
    expect(stats.recovery?.recordsReplayed).toBe(120);
    expect(stats.secondaries[0]?.submittedBatches).toBe(4);
  });

  it('what the live lane shed while re-reading is still repaired by recovery', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    await coverage.rewindCursor(
      { source: 'memory', topic: 't', partition: 0 },
      { kind: 'log-offset', nextOffset: 0 },
    );
    const source = new MemoryStoreSource(logsOf('t', 1, 200), 20);
    source.endless = true;
    let release: () => void = () => undefined;
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) => {
        s.stallSubmit = new Promise<void>((r) => (release = r));
      },
      config: {
        secondaries: { sec0: { maxQueuedBatches: 1 } },
        recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: NEVER },
      },
    });
    const run = built.pipeline.run();
    const lane = () => built.pipeline.stats().secondaries[0];
    // One batch stalled in the sink's submit, one queued, the other eight shed.
    await until(() => built.pipeline.stats().source.records === 200);
    expect(lane()?.shedRecords).toBe(160);
    release();
    // Live ingest is past every shed span and still runs: recovery, not the
    // grace running out, repairs them.
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(stats.recovery?.recordsReplayed).toBe(160);
    // The lane's own two batches, and recovery's replays: each row once.
    expect(stats.secondaries[0]?.submittedBatches).toBe(2);
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    expect(writesOnce(sink)).toEqual({ rows: 200, twice: 0 });
  });

  it('a failed lane leaves every gap to recovery, even past where live ingest resumes', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    await coverage.rewindCursor(
      { source: 'memory', topic: 't', partition: 0 },
      { kind: 'log-offset', nextOffset: 0 },
    );
    // Live ingest has read [0, 40) again so far, and will read on from there.
    const logs = logsOf('t', 1, 200);
    logs.get(partitionKey(P0))?.records.splice(40);
    const source = new MemoryStoreSource(logs, 20);
    source.endless = true;
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: NEVER } },
    });
    const run = built.pipeline.run();
    await until(() => built.pipeline.stats().secondaries[0]?.state === 'failed');
    // The sink takes writes again; its lane stays failed, and sheds what live ingest reads.
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    sink.failSubmits = false;
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(stats.recovery?.recordsReplayed).toBe(200);
    expect(writesOnce(sink)).toEqual({ rows: 200, twice: 0 });
  });

  it('a partition revoked before live ingest got to its gaps is repaired by recovery', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200, 2);
    // The group resumes both partitions at 0; live ingest has read t/1 only to 100 so far.
    const logs = logsOf('t', 2, 200);
    const p1 = logs.get(partitionKey(P1));
    if (p1 === undefined) throw new Error('no t/1');
    p1.records.splice(100);
    const source = new MemoryGroupSource(logs, 20);
    source.endless = true;
    let join: () => void = () => undefined;
    source.joining = new Promise<void>((r) => (join = r));
    let planned: () => void = () => undefined;
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      config: { recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: NEVER } },
    });
    // Recovery's first pass waits to read raw until live ingest has read what it can.
    const held = built.raw.held.bind(built.raw);
    const gate = new Promise<void>((r) => (planned = r));
    let first = true;
    built.raw.held = async () => {
      if (first) {
        first = false;
        await gate;
      }
      return held();
    };
    const run = built.pipeline.run();
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    join();
    await until(() => built.pipeline.stats().source.records === 300);
    planned();
    // Live ingest will read t/1 from 100 on: passes leave it that.
    await until(() => (built.pipeline.stats().recovery?.passes ?? 0) >= 3);
    expect(built.pipeline.stats().recovery?.recordsReplayed).toBe(0);
    // A rebalance takes t/1 away: nothing of it is read here again.
    source.revoke(P1);
    await until(async () => (await gapsOf(coverage, 1, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(await gapsOf(coverage, 0, 200)).toEqual([]);
    expect(writesOnce(sink)).toEqual({ rows: 400, twice: 0 });
    expect(stats.recovery?.recordsReplayed).toBe(100);
    expect(stats.secondaries[0]?.submittedBatches).toBe(15);
  });
});
