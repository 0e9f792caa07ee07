import { ManualClock } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { batchBytes } from '../src/index.js';
import { build } from './doubles/harness.js';
import { logsOf, MemoryGroupSource } from './doubles/memory-sources.js';
import { cycles, until } from './doubles/waits.js';

// What the flow cycle reads, each a deviation from the design that the
// pipeline had (issue 16): which signal moves which state, in a running
// pipeline on a manual clock.

/** A source whose prefetch fill the test sets. */
class PrefetchingSource extends MemoryGroupSource {
  fill = 0;
  prefetchFill(): number {
    return this.fill;
  }
}

const calmConfig = { backpressure: { holdMs: 0, recoveryDwellMs: 0 } };

/** An endless source whose ten records raw made durable, and one cycle that found it normal. */
async function drainedAndNormal(source: MemoryGroupSource) {
  source.endless = true;
  const clock = new ManualClock();
  const built = await build(source, { scheduler: clock });
  const running = built.pipeline.run();
  await until(() => built.pipeline.stats().raw.durableRecords === 10);
  await cycles(clock);
  expect(built.pipeline.stats().flow.state).toBe('normal');
  return { built, clock, running };
}

describe('flow signals in a running pipeline', () => {
  it("raw's queue filling past the critical fill makes the pipeline critical, and calm resumes it", async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 400), 10);
    source.endless = true;
    const clock = new ManualClock();
    const built = await build(source, {
      scheduler: clock,
      raw: (r) => {
        r.mode = 'manual';
        r.queueCapacity = 10;
      },
      config: { flowControl: calmConfig },
    });
    const running = built.pipeline.run();
    // Raw holds its acknowledgements: ten pending batches fill its queue.
    await until(() => built.raw.pending.length >= 10);
    await cycles(clock);
    const stats = built.pipeline.stats();
    expect(stats.flow).toMatchObject({ state: 'critical', channelFill: 1, sourcePaused: true });
    expect(source.pauseCalls.length).toBeGreaterThan(0);
    await built.raw.ack();
    await cycles(clock);
    expect(built.pipeline.stats().flow.sourcePaused).toBe(false);
    built.raw.mode = 'auto';
    await built.pipeline.stop();
    await running;
    expect(built.log.some((l) => l.includes('backpressure normal -> critical'))).toBe(true);
  });

  it("the source's prefetch filling degrades the pipeline", async () => {
    const source = new PrefetchingSource(logsOf('t', 1, 10), 10);
    const { built, clock, running } = await drainedAndNormal(source);
    source.fill = 0.8;
    await cycles(clock);
    expect(built.pipeline.stats().flow).toMatchObject({ state: 'degraded', channelFill: 0.8 });
    await built.pipeline.stop();
    await running;
  });

  it("raw's failing writes, not position commits, are the write-failure signal", async () => {
    const { built, clock, running } = await drainedAndNormal(
      new MemoryGroupSource(logsOf('t', 1, 10), 10),
    );
    built.raw.failingWrites = 2;
    await cycles(clock);
    expect(built.pipeline.stats().flow).toMatchObject({ state: 'degraded', rawWriteFailures: 2 });
    expect(built.pipeline.stats().positions.consecutiveFailures).toBe(0);
    await built.pipeline.stop();
    await running;
  });

  it('a drained endless source with memory at 90% is idle, not stuck: /live holds and run() goes on', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 10), 10);
    source.endless = true;
    const clock = new ManualClock();
    const built = await build(source, {
      scheduler: clock,
      memoryUsage: () => 900,
      config: {
        memoryLimitBytes: 1000,
        flowControl: {
          stuckDetector: {
            warnAfterMs: 10,
            unhealthyAfterMs: 20,
            exitAfterMs: 30,
            clearAfterMs: 5,
          },
        },
      },
    });
    let settled = false;
    const running = built.pipeline.run().finally(() => (settled = true));
    await until(() => built.pipeline.stats().raw.durableRecords === 10);
    // Far past exitAfterMs with nothing read and nothing acknowledged.
    await cycles(clock, 40);
    expect(built.pipeline.stats().flow.stuck).toBe('ok');
    expect(built.pipeline.health().live.ok).toBe(true);
    expect(settled).toBe(false);
    const stats = await built.pipeline.stop();
    await running;
    expect(stats.state).toBe('stopped');
  });

  it('the budget is charged with the estimated expansion, not the bytes as read', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 10), 10);
    const built = await build(source, {
      raw: (r) => (r.mode = 'manual'),
      config: { flowControl: { expansion: { seedRatio: 2.5 } } },
    });
    const running = built.pipeline.run();
    await until(() => built.raw.submitted === 1);
    const records = source.logs.get('t\u00000')?.records ?? [];
    const read = batchBytes({ span: { topic: 't', partition: 0, start: 0, end: 10 }, records });
    expect(built.pipeline.stats().flow.budget.inFlightBytes).toBe(Math.ceil(read * 2.5));
    built.raw.mode = 'auto';
    await built.raw.ack();
    const stats = await running;
    expect(stats.flow.budget.inFlightBytes).toBe(0);
  });

  it('a record larger than the budget can grant passes outside it and holds nothing behind it', async () => {
    // Record 5 alone is larger than the whole budget.
    const big = 'x'.repeat(20_000);
    const source = new MemoryGroupSource(
      logsOf('t', 1, 12, (o) => JSON.stringify({ n: o, pad: o === 5 ? big : '' })),
      12,
    );
    const built = await build(source, {
      secondaries: 1,
      raw: (r) => (r.mode = 'manual'),
      config: {
        flowControl: { byteBudget: { bytes: 4096, warmUp: { fraction: 1 } } },
      },
    });
    const running = built.pipeline.run();
    // With raw holding every acknowledgement, the records after the big one
    // still reach raw: the big one took no permits, so nothing waits on it.
    await until(() => built.pipeline.stats().raw.submittedRecords === 12);
    const held = built.pipeline.stats();
    expect(held.raw.oversizedPieces).toBe(1);
    expect(held.flow.budget.oversized).toBe(1);
    expect(held.flow.budget.inFlightBytes).toBeLessThanOrEqual(4096);
    built.raw.mode = 'auto';
    await built.raw.ack();
    const stats = await running;
    expect(built.raw.holdsPrefix('t', 0, 12)).toBe(true);
    expect(stats.flow.budget.inFlightBytes).toBe(0);
    // Below maxRecordBytes, so the secondary gets it too.
    expect(stats.secondaries[0]?.deliveredRecords).toBe(12);
  });
});
