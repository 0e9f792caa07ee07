import { describe, expect, it } from 'vitest';
import { build } from './doubles/harness.js';
import { logsOf, MemoryGroupSource } from './doubles/memory-sources.js';

describe('rebalance', () => {
  it('drops acknowledgements of a revoked partition and never commits for it', async () => {
    const source = new MemoryGroupSource(logsOf('t', 2, 400), 20);
    source.endless = true;
    const built = await build(source, { raw: (r) => (r.mode = 'manual') });
    void built.pipeline.run();
    while (built.raw.submitted < 10) await new Promise((r) => setTimeout(r, 1));
    const p1 = { topic: 't', partition: 1 };
    source.revoke(p1);
    const commitsBefore = source.commits.length;
    built.raw.mode = 'auto';
    await built.raw.ack();
    await new Promise((r) => setTimeout(r, 30));
    // The source refuses commits for partitions it does not own; none were attempted.
    expect(source.commits.slice(commitsBefore).every((c) => c.partition.partition === 0)).toBe(
      true,
    );
    expect(built.pipeline.stats().raw.droppedAcks).toBeGreaterThan(0);
    expect(built.pipeline.stats().positions.failures).toBe(0);

    // The partition comes back from its last committed offset: reading resumes there.
    const from = source.lastCommit(p1) ?? 0;
    source.assign(p1, from);
    await new Promise((r) => setTimeout(r, 50));
    const stats = await built.pipeline.stop();
    expect(source.lastCommit(p1)).toBe(400);
    expect(built.raw.holdsPrefix('t', 1, 400)).toBe(true);
    expect(stats.positions.failures).toBe(0);
  });

  it('a span read again after re-assignment is matched to its own acknowledgement', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 100), 10);
    source.endless = true;
    const built = await build(source, { raw: (r) => (r.mode = 'manual') });
    const running = built.pipeline.run();
    while (built.raw.submitted < 10) await new Promise((r) => setTimeout(r, 1));
    const p0 = { topic: 't', partition: 0 };
    source.revoke(p0);
    source.assign(p0, 0); // same spans read again, while the old ones are unacknowledged
    while (built.raw.submitted < 20) await new Promise((r) => setTimeout(r, 1));
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
});

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 2));
}
