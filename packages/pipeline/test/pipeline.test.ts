import { ManualClock, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { build, keepOpen } from './doubles/harness.js';
import { logsOf, MemoryGroupSource, MemoryStoreSource } from './doubles/memory-sources.js';
import { cycles, until } from './doubles/waits.js';

describe('the gating path', () => {
  it('commits a position only after raw durably holds everything before it', async () => {
    const source = new MemoryGroupSource(logsOf('t', 3, 500), 37);
    const clock = new ManualClock();
    const { pipeline, raw } = await build(source, {
      scheduler: clock,
      raw: (r) => (r.mode = 'manual'),
    });
    const running = pipeline.run();
    // Acknowledge in bursts of 1..4, a flow cycle (the commit) after each:
    // every commit so far must be backed by what raw holds.
    let acked = 0;
    for (let round = 0; acked < 42; round++) {
      await until(() => raw.submitted > acked);
      const burst = Math.min(1 + (round % 4), raw.submitted - acked);
      await raw.ack(burst);
      acked += burst;
      await cycles(clock);
      expect(source.commits.length).toBeGreaterThan(0);
      for (const c of source.commits) {
        expect(raw.holdsPrefix(c.partition.topic, c.partition.partition, c.next)).toBe(true);
      }
    }
    raw.mode = 'auto';
    await raw.ack();
    const stats = await running;
    for (let p = 0; p < 3; p++) {
      expect(source.lastCommit({ topic: 't', partition: p })).toBe(500);
      expect(raw.holdsPrefix('t', p, 500)).toBe(true);
    }
    expect(stats.raw.durableRecords).toBe(1500);
    expect(stats.state).toBe('stopped');
  });

  it('never commits on submission: with acks held, nothing is committed', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 100), 10);
    source.endless = true;
    const clock = new ManualClock();
    const { pipeline, raw } = await build(source, {
      scheduler: clock,
      raw: (r) => (r.mode = 'manual'),
    });
    const running = pipeline.run();
    await until(() => raw.submitted === 10);
    // Flow cycles run the commit: with every acknowledgement held, they find nothing to commit.
    await cycles(clock, 3);
    expect(source.commits).toEqual([]);
    await raw.ack(3);
    await cycles(clock);
    expect(source.lastCommit({ topic: 't', partition: 0 })).toBe(30);
    raw.mode = 'auto';
    void raw.ack();
    await pipeline.stop();
    await running;
    expect(source.lastCommit({ topic: 't', partition: 0 })).toBe(100);
  });

  it('stores a store-managed cursor only for what raw holds, and resumes from it', async () => {
    const coverage = keepOpen(new InMemoryCoverage({ sinks: [sinkId('raw')] }));
    const first = new MemoryStoreSource(logsOf('f', 2, 300), 25);
    first.endless = true;
    const clock = new ManualClock();
    const a = await build(first, { coverage, scheduler: clock, raw: (r) => (r.mode = 'manual') });
    // Observed from the start: the run may fail before the test reaches its await.
    const failed = expect(a.pipeline.run()).rejects.toThrow(/TWG_PIPELINE_RAW_FAILED/);
    await until(() => a.raw.submitted === 24);
    // Round-robin reads: p0[0,25) p1[0,25) p0[25,50) become durable, nothing after.
    await a.raw.ack(3);
    a.raw.failFlush = true;
    // The cursors are saved by a flow cycle, before the failing shutdown.
    await cycles(clock);
    expect(await coverage.loadCursor({ source: 'memory', topic: 'f', partition: 0 })).toEqual({
      kind: 'log-offset',
      nextOffset: 50,
    });
    void a.pipeline.stop().catch(() => undefined);
    await failed;
    const at = (partition: number) =>
      coverage.loadCursor({ source: 'memory', topic: 'f', partition });
    expect(await at(0)).toEqual({ kind: 'log-offset', nextOffset: 50 });
    expect(await at(1)).toEqual({ kind: 'log-offset', nextOffset: 25 });

    // The same raw again (a raw that lost what its coverage recorded is refused: raw-hole.test.ts).
    const second = new MemoryStoreSource(logsOf('f', 2, 300), 25);
    const b = await build(second, { coverage, rawHeld: a.raw.stored });
    const stats = await b.pipeline.run();
    expect(second.seeks.map((s) => [s.partition.partition, s.cursor.nextOffset])).toEqual([
      [0, 50],
      [1, 25],
    ]);
    // Read from the cursors on, nothing before them again: (300 - 50) + (300 - 25).
    expect(stats.source.records).toBe(525);
    expect(b.raw.holdsPrefix('f', 0, 300) && b.raw.holdsPrefix('f', 1, 300)).toBe(true);
    expect(await at(0)).toEqual({ kind: 'log-offset', nextOffset: 300 });
  });

  it('splits source batches under record granularity: every record is its own span', async () => {
    const source = new MemoryStoreSource(logsOf('r', 1, 20), 7);
    const { pipeline, raw } = await build(source, { config: { granularity: 'record' } });
    const stats = await pipeline.run();
    expect(stats.raw.submittedBatches).toBe(20);
    expect(raw.holdsPrefix('r', 0, 20)).toBe(true);
  });

  it('fails loud when raw refuses a batch, and commits nothing past what raw holds', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 10);
    const { pipeline, raw } = await build(source, { raw: (r) => (r.failAfter = 5) });
    await expect(pipeline.run()).rejects.toThrow(
      /TWG_PIPELINE_RAW_FAILED.*primary raw refused t\/0\[50,60\)/,
    );
    const last = source.lastCommit({ topic: 't', partition: 0 }) ?? 0;
    expect(raw.holdsPrefix('t', 0, last)).toBe(true);
    expect(pipeline.stats().state).toBe('failed');
  });

  it('fails loud even when raw refuses one batch alone: raw never sets a batch aside', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 10);
    // A refusal a secondary's lane would quarantine and go past (scope 'batch').
    const { pipeline, raw } = await build(source, {
      raw: (r) => (r.refuseBatch = (s) => (s.start === 50 ? 'poison' : null)),
    });
    await expect(pipeline.run()).rejects.toThrow(
      /TWG_PIPELINE_RAW_FAILED.*primary raw refused t\/0\[50,60\)/,
    );
    const last = source.lastCommit({ topic: 't', partition: 0 }) ?? 0;
    expect(last).toBeLessThanOrEqual(50);
    expect(raw.holdsPrefix('t', 0, last)).toBe(true);
    expect(pipeline.stats().quarantine.byReason).not.toHaveProperty('contract');
  });

  it('a raw refusal during stop() still fails the run', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 200), 10);
    source.endless = true;
    let refuse: (error: Error) => void = () => undefined;
    // Raw's own backpressure holds the first submit; stop() is called while it waits.
    const stall = new Promise<void>((_, reject) => (refuse = reject));
    const { pipeline, raw } = await build(source, { raw: (r) => void (r.stallSubmit = stall) });
    const failed = expect(pipeline.run()).rejects.toThrow(/TWG_PIPELINE_RAW_FAILED/);
    await until(() => pipeline.stats().source.batches >= 1);
    const stopping = pipeline.stop();
    refuse(new Error('raw disk full (injected)'));
    await expect(stopping).rejects.toThrow(/TWG_PIPELINE_RAW_FAILED.*t\/0\[0,10\)/);
    await failed;
    expect(pipeline.stats().state).toBe('failed');
    expect(raw.submitted).toBe(0);
    expect(source.commits).toEqual([]);
  });

  it('retries a failed commit with the newest position, then fails loud after the limit', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 50), 10);
    source.commitFailures = 3;
    const ok = await build(source);
    await ok.pipeline.run();
    expect(source.lastCommit({ topic: 't', partition: 0 })).toBe(50);
    expect(ok.pipeline.stats().positions.failures).toBe(3);

    const broken = new MemoryGroupSource(logsOf('t', 1, 50), 10);
    broken.commitFailures = 1000;
    const bad = await build(broken, { config: { commit: { maxConsecutiveFailures: 4 } } });
    await expect(bad.pipeline.run()).rejects.toThrow(/TWG_PIPELINE_COMMIT_FAILED/);
  });
});
