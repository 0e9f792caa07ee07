import { ManualClock, partitionKey, type SourcePartition } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { build } from './doubles/harness.js';
import { logsOf, MemoryGroupSource } from './doubles/memory-sources.js';
import { cycles, until } from './doubles/waits.js';

/** A source whose batches already fetched keep coming after `pause` (the Source contract allows it). */
class PrefetchingSource extends MemoryGroupSource {
  override pause(partitions: readonly SourcePartition[]): void {
    this.pauseCalls.push([...partitions]);
  }
}

/** Memory counts as pressure while anything is in flight; no hold or dwell before relaxing. */
const pressure = {
  memoryLimitBytes: 1000,
  flowControl: {
    backpressure: { holdMs: 0, recoveryDwellMs: 0, workingSet: { idleChannelFill: 1e-6 } },
    // A piece costs its bytes as read, so the budget arithmetic below is exact.
    expansion: { seedRatio: 1 },
  },
} as const;

describe('rebalance', () => {
  it('drops acknowledgements of a revoked partition and never commits for it', async () => {
    const source = new MemoryGroupSource(logsOf('t', 2, 400), 20);
    source.endless = true;
    const clock = new ManualClock();
    const built = await build(source, { scheduler: clock, raw: (r) => (r.mode = 'manual') });
    const running = built.pipeline.run();
    await until(() => built.raw.submitted >= 10);
    const p1 = { topic: 't', partition: 1 };
    source.revoke(p1);
    const commitsBefore = source.commits.length;
    built.raw.mode = 'auto';
    await built.raw.ack();
    // A flow cycle commits what raw acknowledged: p0's positions, never p1's.
    await cycles(clock);
    expect(source.commits.length).toBeGreaterThan(commitsBefore);
    // The source refuses commits for partitions it does not own; none were attempted.
    expect(source.commits.slice(commitsBefore).every((c) => c.partition.partition === 0)).toBe(
      true,
    );
    expect(built.pipeline.stats().raw.droppedAcks).toBeGreaterThan(0);
    expect(built.pipeline.stats().positions.failures).toBe(0);

    // The partition comes back from its last committed offset: reading resumes there.
    const from = source.lastCommit(p1) ?? 0;
    source.assign(p1, from);
    // Read again and committed by the flow cycles.
    await until(async () => {
      await cycles(clock);
      return source.lastCommit(p1) === 400;
    });
    const stats = await built.pipeline.stop();
    await running;
    expect(source.lastCommit(p1)).toBe(400);
    expect(built.raw.holdsPrefix('t', 1, 400)).toBe(true);
    expect(stats.positions.failures).toBe(0);
  });

  it('a span read again after re-assignment is matched to its own acknowledgement', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 100), 10);
    source.endless = true;
    const built = await build(source, { raw: (r) => (r.mode = 'manual') });
    const running = built.pipeline.run();
    await until(() => built.raw.submitted >= 10);
    const p0 = { topic: 't', partition: 0 };
    source.revoke(p0);
    source.assign(p0, 0); // same spans read again, while the old ones are unacknowledged
    await until(() => built.raw.submitted >= 20);
    built.raw.mode = 'auto';
    await built.raw.ack();
    const stats = await built.pipeline.stop();
    await running;
    expect(stats.raw.droppedAcks).toBe(10);
    expect(source.lastCommit(p0)).toBe(100);
  });

  it('a batch read before a revocation that waited for the budget is dropped, not registered', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 400), 40);
    source.endless = true;
    const built = await build(source, {
      raw: (r) => (r.mode = 'manual'),
      config: { flowControl: { byteBudget: { bytes: 4096, warmUp: { fraction: 1 } } } },
    });
    const running = built.pipeline.run();
    await waitUntil(() => built.pipeline.stats().flow.budget.waiters === 1);
    const p0 = { topic: 't', partition: 0 };
    const submitted = built.raw.submitted;
    source.revoke(p0);
    source.assign(p0, 0);
    built.raw.mode = 'auto';
    await built.raw.ack();
    await waitUntil(() => source.lastCommit(p0) === 400);
    const stats = await built.pipeline.stop();
    await running;
    expect(submitted).toBeGreaterThan(0);
    expect(stats.state).toBe('stopped');
    expect(built.raw.holdsPrefix('t', 0, 400)).toBe(true);
  });

  it('a batch read before a revocation that waited for the paused source is dropped, not registered', async () => {
    const source = new PrefetchingSource(logsOf('t', 1, 400), 20);
    source.endless = true;
    let memory = 0.1;
    const built = await build(source, {
      memoryUsage: () => memory * 1000,
      // A small queue: the one batch raw holds keeps the memory explained (pressure, not fragmentation).
      raw: (r) => {
        r.mode = 'manual';
        r.queueCapacity = 4;
      },
      config: {
        ...pressure,
        flowControl: {
          ...pressure.flowControl,
          byteBudget: { bytes: 4096, warmUp: { fraction: 1 } },
        },
      },
    });
    const running = built.pipeline.run();
    await waitUntil(() => built.pipeline.stats().flow.budget.waiters === 1);
    memory = 0.95;
    await waitUntil(() => built.pipeline.stats().flow.sourcePaused);
    // Room frees: the waiting batch goes to raw, the next one is read and waits for the throttle.
    await built.raw.ack();
    await waitUntil(() => built.pipeline.stats().source.batches === 4 && built.raw.submitted === 3);
    const p0 = { topic: 't', partition: 0 };
    source.revoke(p0);
    const commitsBefore = source.commits.length;
    built.raw.mode = 'auto';
    await built.raw.ack();
    memory = 0.1;
    await waitUntil(() => !built.pipeline.stats().flow.sourcePaused);
    // stop() commits every position raw acknowledged: one for p0 would show below.
    const stats = await built.pipeline.stop();
    await running;
    // The batch read before the revocation never reached raw, and nothing was committed for p0.
    expect(built.raw.submitted).toBe(3);
    expect(source.commits.slice(commitsBefore)).toEqual([]);
    expect(stats.positions.failures).toBe(0);
    expect(stats.raw.inflightSpans).toBe(0);
  });

  it('a partition revoked while the source was paused is read again when it comes back', async () => {
    const source = new MemoryGroupSource(logsOf('t', 2, 100), 10);
    source.endless = true;
    let memory = 0.1;
    const built = await build(source, {
      memoryUsage: () => memory * 1000,
      raw: (r) => (r.mode = 'manual'),
      config: pressure,
    });
    const running = built.pipeline.run();
    const p1 = { topic: 't', partition: 1 };
    await waitUntil(() => built.pipeline.stats().source.records === 200);
    memory = 0.95;
    await waitUntil(() => source.paused.size === 2);
    source.revoke(p1);
    await built.raw.ack();
    memory = 0.1;
    await waitUntil(() => !built.pipeline.stats().flow.sourcePaused);
    built.raw.mode = 'auto';
    source.assign(p1, 50);
    const read = await within(2000, () => built.pipeline.stats().source.records === 250);
    const stats = await built.pipeline.stop();
    await running;
    expect(source.paused.has(partitionKey(p1))).toBe(false);
    expect(read).toBe(true);
    expect(stats.state).toBe('stopped');
  });
});

const waitUntil = until;

/** Waits up to `ms` for `check`; returns whether it held. */
async function within(ms: number, check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  return check();
}
