import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SourceCursor } from '@thalweg/connector-core';
import type { CoverageTier, CursorKey } from '../src/coverage-store.js';
import { InMemoryCoverage } from '../src/in-memory-coverage.js';
import { LevelDbCoverage } from '../src/leveldb/leveldb-coverage.js';
import { WriteBehindCoverage } from '../src/write-behind-coverage.js';
import { A } from './contract/coverage-contract.js';

const dirs: string[] = [];
async function location(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-wb-rewind-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const at: CursorKey = { source: 'files', topic: 'events', partition: 0 };
const log = (nextOffset: number): SourceCursor => ({ kind: 'log-offset', nextOffset });

async function writeBehind(where: string, durable: CoverageTier): Promise<WriteBehindCoverage> {
  const local = await LevelDbCoverage.open({ location: where, sinks: [A] });
  return new WriteBehindCoverage({ local, durable, checkpointIntervalMs: 60_000 });
}

/** The durable tier, outliving the write-behind store that closes it. */
function kept(inner: InMemoryCoverage): CoverageTier {
  return {
    merge: (d) => inner.merge(d),
    covered: (k) => inner.covered(k),
    destinations: () => inner.destinations(),
    saveCursor: (k, c) => inner.saveCursor(k, c),
    rewindCursor: (k, c) => inner.rewindCursor(k, c),
    loadCursor: (k) => inner.loadCursor(k),
    knows: (s) => inner.knows(s),
    close: async () => undefined,
  };
}

describe('WriteBehindCoverage.rewindCursor', () => {
  it('reaches the durable tier, and no later checkpoint of the older local cursor undoes it', async () => {
    const durable = new InMemoryCoverage({ sinks: [A] });
    const where = await location();
    const store = await writeBehind(where, kept(durable));
    await store.saveCursor(at, log(100));
    await store.checkpoint();
    // Saved locally, not yet checkpointed: the local log holds 150 for the durable tier.
    await store.saveCursor(at, log(150));
    expect(await durable.loadCursor(at)).toEqual(log(100));

    await store.rewindCursor(at, log(40));
    expect(await durable.loadCursor(at)).toEqual(log(40));
    expect(await store.loadCursor(at)).toEqual(log(40));
    await store.checkpoint();
    expect(await durable.loadCursor(at)).toEqual(log(40));
    expect((await store.diagnostics()).unflushedEntries).toBe(0);
    await store.close();

    // The same pod restarting reads its local tier too: it was rewound as well.
    const again = await writeBehind(where, kept(durable));
    expect(await again.loadCursor(at)).toEqual(log(40));
    // Positions saved after the rewind move it forward again, through both tiers.
    await again.saveCursor(at, log(60));
    await again.close();
    expect(await durable.loadCursor(at)).toEqual(log(60));
  });

  it('waits for a checkpoint in flight, which would otherwise write its older cursor after the rewind', async () => {
    const inner = new InMemoryCoverage({ sinks: [A] });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    let gate = true;
    const seen = { rewound: false };
    const slow: CoverageTier = {
      merge: (d) => inner.merge(d),
      covered: (k) => inner.covered(k),
      destinations: () => inner.destinations(),
      saveCursor: async (k, c) => {
        if (gate) {
          gate = false;
          entered();
          await held;
        }
        await inner.saveCursor(k, c);
      },
      rewindCursor: (k, c) => {
        seen.rewound = true;
        return inner.rewindCursor(k, c);
      },
      loadCursor: (k) => inner.loadCursor(k),
      knows: (s) => inner.knows(s),
      close: () => inner.close(),
    };
    const store = await writeBehind(await location(), slow);
    await inner.saveCursor(at, log(100));
    await store.saveCursor(at, log(150));
    const checkpoint = store.checkpoint();
    await inFlight; // It has read the local log (150) and is writing it.
    const rewind = store.rewindCursor(at, log(40));
    // Give a rewind that does not wait every chance to reach the durable tier
    // first; the queued one cannot until the checkpoint is released.
    for (let turn = 0; turn < 500 && !seen.rewound; turn++)
      await new Promise((resolve) => setImmediate(resolve));
    expect(seen.rewound).toBe(false);
    release();
    await checkpoint;
    await rewind;
    expect(await inner.loadCursor(at)).toEqual(log(40));
    expect(await store.loadCursor(at)).toEqual(log(40));
    await store.close();
  });

  it('checks the rewind against the later of both tiers and refuses a forward one, changing neither', async () => {
    const durable = new InMemoryCoverage({ sinks: [A] });
    const store = await writeBehind(await location(), durable);
    await durable.saveCursor(at, log(100));
    await store.saveCursor(at, log(150));
    // 120 is below the local cursor, above the durable one: a rewind, not a forward move.
    await store.rewindCursor(at, log(120));
    expect(await store.loadCursor(at)).toEqual(log(120));
    const refused = store.rewindCursor(at, log(121));
    await expect(refused).rejects.toMatchObject({ code: 'TWG_COVERAGE_REWIND_REFUSED' });
    await expect(refused).rejects.toThrow(/cursor files events\/0/);
    expect(await durable.loadCursor(at)).toEqual(log(120));
    expect(await store.loadCursor(at)).toEqual(log(120));
    await store.close();
  });

  it("drops the key's unflushed cursor entries from the local log, keeping other keys'", async () => {
    const local = await LevelDbCoverage.open({ location: await location(), sinks: [A] });
    local.serveAsLocalTier();
    const other = { ...at, partition: 1 };
    await local.saveCursor(at, log(150));
    await local.saveCursor(other, log(70));
    await local.rewindCursor(at, log(40));
    const pending = await local.unflushed();
    expect(pending.cursors).toEqual([{ key: other, cursor: log(70) }]);
    expect(await local.loadCursor(at)).toEqual(log(40));
    await local.close();
  });
});
