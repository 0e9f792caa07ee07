import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SinkId } from '@thalweg/connector-core';
import { InMemoryCoverage } from '../src/in-memory-coverage.js';
import { LevelDbCoverage } from '../src/leveldb/leveldb-coverage.js';
import { WriteBehindCoverage } from '../src/write-behind-coverage.js';
import type { CoverageDelta } from '../src/coverage-store.js';
import { A, describeCoverageContract, receipt } from './contract/coverage-contract.js';

const dirs: string[] = [];
async function location(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-wb-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function pair(sinks: readonly SinkId[], durable = new InMemoryCoverage({ sinks })) {
  const at = await location();
  const local = await LevelDbCoverage.open({ location: at, sinks });
  return {
    at,
    durable,
    store: new WriteBehindCoverage({ local, durable, checkpointIntervalMs: 60_000 }),
  };
}

describeCoverageContract('write-behind (LevelDB in front of memory)', {
  persistent: false,
  propertyRuns: 20,
  fresh: async (sinks) => ({ store: (await pair(sinks)).store }),
});

const key = { sink: A, topic: 'orders', partition: 0 };

describe('WriteBehindCoverage', () => {
  it('keeps coverage local until a checkpoint, then a new owner sees it in the durable tier', async () => {
    const durable = new InMemoryCoverage({ sinks: [A] });
    const first = (await pair([A], durable)).store;
    await first.recordDurable([receipt(A, 0, 10), receipt(A, 20, 30)]);
    expect((await durable.covered(key)).rangeCount).toBe(0);
    // One log entry per destination per call.
    expect((await first.diagnostics()).unflushedEntries).toBe(1);

    await first.checkpoint();
    expect((await durable.covered(key)).ranges()).toEqual([
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ]);
    const d = await first.diagnostics();
    expect(d.unflushedEntries).toBe(0);
    expect(d.msSinceCheckpoint).not.toBeNull();

    // The new owner after a rebalance: its own empty local tier, the same durable tier.
    const local2 = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    const next = new WriteBehindCoverage({ local: local2, durable, checkpointIntervalMs: 60_000 });
    await first.recordDurable([receipt(A, 10, 20)]); // not checkpointed: the new owner must not see it
    expect(await next.gaps(key, 0, 30)).toEqual([{ start: 10, end: 20 }]);
    await next.close();
  });

  it('keeps what a failed checkpoint did not deliver and sends it with the next one', async () => {
    const inner = new InMemoryCoverage({ sinks: [A] });
    let fail = true;
    const flaky = {
      merge: async (deltas: readonly CoverageDelta[]) => {
        if (fail) throw new Error('injected: durable tier unreachable');
        await inner.merge(deltas);
      },
      covered: inner.covered.bind(inner),
      destinations: inner.destinations.bind(inner),
      saveCursor: inner.saveCursor.bind(inner),
      rewindCursor: inner.rewindCursor.bind(inner),
      loadCursor: inner.loadCursor.bind(inner),
      knows: inner.knows.bind(inner),
      close: inner.close.bind(inner),
    };
    const local = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    const store = new WriteBehindCoverage({ local, durable: flaky, checkpointIntervalMs: 60_000 });
    await store.recordDurable([receipt(A, 0, 10)]);
    await expect(store.checkpoint()).rejects.toThrow(/injected/);
    expect((await store.diagnostics()).lastCheckpointError).toMatch(/injected/);
    expect((await store.diagnostics()).unflushedEntries).toBe(1);
    fail = false;
    await store.recordDurable([receipt(A, 10, 20)]);
    await store.checkpoint();
    expect((await inner.covered(key)).ranges()).toEqual([{ start: 0, end: 20 }]);
    expect((await store.diagnostics()).lastCheckpointError).toBeNull();
    await store.close();
  });

  it('checkpoints at close and on its interval', async () => {
    const inner = new InMemoryCoverage({ sinks: [A] });
    const merged: CoverageDelta[] = [];
    const recording = {
      merge: async (deltas: readonly CoverageDelta[]) => {
        merged.push(...deltas);
        await inner.merge(deltas);
      },
      covered: inner.covered.bind(inner),
      destinations: inner.destinations.bind(inner),
      saveCursor: inner.saveCursor.bind(inner),
      rewindCursor: inner.rewindCursor.bind(inner),
      loadCursor: inner.loadCursor.bind(inner),
      knows: inner.knows.bind(inner),
      close: async () => undefined,
    };
    const local = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    const store = new WriteBehindCoverage({ local, durable: recording, checkpointIntervalMs: 20 });
    await store.recordDurable([receipt(A, 0, 10)]);
    await expect.poll(async () => (await inner.covered(key)).rangeCount, { timeout: 5000 }).toBe(1);
    await store.recordDurable([receipt(A, 50, 60)]);
    await store.close();
    expect((await inner.covered(key)).ranges()).toEqual([
      { start: 0, end: 10 },
      { start: 50, end: 60 },
    ]);
    expect(merged.flatMap((d) => d.ranges)).toEqual([
      { start: 0, end: 10 },
      { start: 50, end: 60 },
    ]);
  });

  it('refuses a non-positive interval naming the field', async () => {
    const local = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    expect(
      () =>
        new WriteBehindCoverage({
          local,
          durable: new InMemoryCoverage({ sinks: [A] }),
          checkpointIntervalMs: 0,
        }),
    ).toThrow(/checkpointIntervalMs/);
    await local.close();
  });
});
