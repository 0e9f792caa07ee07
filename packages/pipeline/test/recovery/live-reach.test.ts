import { ManualClock, sinkId } from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { LiveReach } from '../../src/recovery/live-reach.js';
import { build } from '../doubles/harness.js';
import type { MemorySecondary } from '../doubles/memory-sinks.js';
import { logsOf, MemoryGroupSource } from '../doubles/memory-sources.js';
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
    // Before the first assignment, any partition may be this member's.
    expect(reach.floor(P0)).toBe(0);
    reach.assigned(P0);
    // Taken, and where it resumes not known yet: all of it waits for live.
    expect(reach.floor(P0)).toBe(0);
    // The assignment is known now: a partition not in it is another member's.
    expect(reach.floor(P1)).toBeNull();
    reach.offered(P0, 40);
    expect(reach.floor(P0)).toBe(40);
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
    expect(reach.floor(P0)).toBe(0);
    reach.end();
    expect(reach.floor(P0)).toBeNull();
  });

  it('a store-managed partition is known from open; an unassigned one only for the grace', () => {
    const clock = new ManualClock();
    const reach = new LiveReach(clock, 1_000);
    reach.resumeAt(P0, 25);
    expect(reach.floor(P0)).toBe(25);
    expect(reach.floor(P1)).toBe(0);
    clock.advance(1_001);
    expect(reach.floor(P0)).toBeNull();
    expect(reach.floor(P1)).toBeNull();
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
  it('a gap live ingest re-reads is written once, by the live lane, not by recovery too', async () => {
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
    // Recovery's first pass plans while the group is still joining, and
    // submits what it planned before it waits for the sink's acknowledgements.
    await until(() => built.pipeline.backlog().plannedAt !== null);
    await until(() => sink.submitted >= built.pipeline.backlog().unclaimedWindows);
    // Then live ingest re-reads the same range and offers it to the lane.
    join();
    await until(() => built.pipeline.stats().secondaries[0]?.submittedBatches === 10);
    sink.mode = 'auto';
    await sink.ack();
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(writesOnce(sink)).toEqual({ rows: 200, twice: 0 });
    expect(stats.recovery?.recordsReplayed).toBe(0);
    expect(stats.secondaries[0]?.submittedBatches).toBe(10);
  });

  it('what the live lane shed while re-reading is still repaired by recovery', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 20);
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

  it('a partition revoked before live ingest reached it is repaired by recovery; the kept one by live', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200, 2);
    const source = new MemoryGroupSource(logsOf('t', 2, 200), 20);
    source.endless = true;
    let join: () => void = () => undefined;
    source.joining = new Promise<void>((r) => (join = r));
    const built = await build(source, {
      coverage,
      rawHeld,
      secondaries: 1,
      config: { recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: NEVER } },
    });
    const run = built.pipeline.run();
    const sink = built.secondaries[0];
    if (sink === undefined) throw new Error('no secondary');
    // Both partitions may be this member's: passes leave them to live.
    await until(() => (built.pipeline.stats().recovery?.passes ?? 0) >= 3);
    expect(built.pipeline.stats().recovery?.recordsReplayed).toBe(0);
    // A rebalance takes t/1 away before anything of it was read here.
    source.revoke(P1);
    await until(async () => (await gapsOf(coverage, 1, 200)).length === 0);
    expect(built.pipeline.stats().recovery?.recordsReplayed).toBe(200);
    expect([...sink.rows.keys()].filter((k) => k.startsWith('0:'))).toEqual([]);
    join();
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(writesOnce(sink)).toEqual({ rows: 400, twice: 0 });
    expect(stats.recovery?.recordsReplayed).toBe(200);
    // t/0 by the live lane alone (its confirmations count recovery's too).
    expect(stats.secondaries[0]?.submittedBatches).toBe(10);
  });

  it('a partition live ingest never reads (the group still joining) is recovery’s after the grace', async () => {
    const { coverage, rawHeld } = await ingestWithoutSecondary(200);
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 20);
    source.joining = new Promise<void>(() => undefined);
    const clock = new ManualClock();
    const built = await build(source, {
      coverage,
      rawHeld,
      clock,
      secondaries: 1,
      config: { recovery: { role: 'both', scanEveryMs: 10, liveGraceMs: 1_000 } },
    });
    const run = built.pipeline.run();
    await until(() => (built.pipeline.stats().recovery?.passes ?? 0) >= 3);
    expect(built.pipeline.stats().recovery?.recordsReplayed).toBe(0);
    clock.advance(1_001);
    await until(async () => (await gapsOf(coverage, 0, 200)).length === 0);
    const stats = await built.pipeline.stop();
    await run;
    expect(stats.recovery?.recordsReplayed).toBe(200);
    expect(built.secondaries[0]?.rows.size).toBe(200);
  });
});
