import { ManualClock, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage, type DurableReceipt } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { build, keepOpen } from './doubles/harness.js';
import { logsOf, MemoryGroupSource } from './doubles/memory-sources.js';

const RAW = sinkId('raw');
const SEC = sinkId('sec0');

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setImmediate(r));
}

/** A coverage store whose writes of the secondary's receipts hang until released. */
function hangingSecondaryWrites() {
  const store = keepOpen(new InMemoryCoverage({ sinks: [RAW, SEC] }));
  const write = store.recordDurable.bind(store);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const calls: { readonly sinks: Set<string>; readonly done: Promise<void> }[] = [];
  store.recordDurable = (receipts: readonly DurableReceipt[]) => {
    const sinks = new Set(receipts.map((r) => r.sink));
    const done = (async () => {
      if (sinks.has(SEC)) await gate;
      await write(receipts);
    })();
    calls.push({ sinks, done });
    return done;
  };
  return { store, calls, release };
}

describe('per-lane isolation', () => {
  it("a secondary's hanging coverage write holds neither raw's coverage nor its commits", async () => {
    const { store, calls, release } = hangingSecondaryWrites();
    const source = new MemoryGroupSource(logsOf('t', 1, 100), 10);
    source.endless = true;
    const clock = new ManualClock();
    const built = await build(source, {
      coverage: store,
      secondaries: 1,
      scheduler: clock,
      config: { recovery: { role: 'ingest' } },
    });
    const running = built.pipeline.run();
    await until(() => {
      const s = built.pipeline.stats();
      return s.raw.durableRecords === 100 && s.secondaries[0]?.deliveredRecords === 100;
    });
    expect(calls).toEqual([]);
    // One flow cycle: each lane starts its own coverage round, and the commit.
    clock.advance(5);
    const rawOnly = calls.find((c) => c.sinks.has(RAW) && !c.sinks.has(SEC));
    const secondary = calls.find((c) => c.sinks.has(SEC));
    // One write carrying both lanes' receipts would wait on the secondary's.
    expect(rawOnly).toBeDefined();
    expect(secondary).toBeDefined();
    await rawOnly?.done;
    expect((await store.covered({ sink: RAW, topic: 't', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 100 },
    ]);
    await until(() => source.lastCommit({ topic: 't', partition: 0 }) === 100);
    // The secondary's write is still hanging, and its coverage not claimed.
    expect((await store.covered({ sink: SEC, topic: 't', partition: 0 })).ranges()).toEqual([]);
    expect(built.pipeline.stats().coverage.recorded).toBe(10);

    release();
    await secondary?.done;
    await built.pipeline.stop();
    await running;
    expect((await store.covered({ sink: SEC, topic: 't', partition: 0 })).ranges()).toEqual([
      { start: 0, end: 100 },
    ]);
  });
});
