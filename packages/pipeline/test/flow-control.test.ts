import { ManualClock } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { batchBytes } from '../src/index.js';
import { build } from './doubles/harness.js';
import {
  logsOf,
  makeRecords,
  MemoryGroupSource,
  MemoryStoreSource,
} from './doubles/memory-sources.js';
import { cycles, until } from './doubles/waits.js';

describe('live flow control', () => {
  it('the byte budget bounds what is in flight to raw', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 5000), 50);
    const budget = 64 * 1024;
    const built = await build(source, {
      raw: (r) => (r.mode = 'manual'),
      config: { flowControl: { byteBudget: { bytes: budget, warmUp: { fraction: 1 } } } },
    });
    const running = built.pipeline.run();
    // With raw holding every acknowledgement, the ingest loop ends up waiting for the budget.
    await until(() => built.pipeline.stats().flow.budget.waiters === 1);
    const held = built.pipeline.stats();
    expect(held.flow.budget.inFlightBytes).toBeLessThanOrEqual(budget);
    expect(held.raw.submittedRecords).toBeLessThan(5000);
    expect(held.flow.budget.waiters).toBe(1);
    built.raw.mode = 'auto';
    await built.raw.ack();
    const stats = await running;
    expect(stats.raw.durableRecords).toBe(5000);
    expect(stats.flow.budget.inFlightBytes).toBe(0);
  });

  it('critical memory pressure pauses the source, and calm resumes it', async () => {
    const source = new MemoryGroupSource(logsOf('t', 2, 200), 10);
    source.endless = true;
    let memory = 0.1;
    const clock = new ManualClock();
    // Raw holds its acks, so records in flight explain the memory: it is pressure.
    const built = await build(source, {
      scheduler: clock,
      memoryUsage: () => memory * 1000,
      raw: (r) => (r.mode = 'manual'),
      config: {
        memoryLimitBytes: 1000,
        flowControl: {
          backpressure: { holdMs: 0, recoveryDwellMs: 0 },
          byteBudget: { bytes: 16 * 1024, warmUp: { fraction: 1 } },
        },
      },
    });
    const running = built.pipeline.run();
    await until(() => built.pipeline.stats().flow.budget.waiters === 1);
    await cycles(clock);
    expect(built.pipeline.stats().flow.state).toBe('normal');
    memory = 0.95;
    await cycles(clock);
    expect(built.pipeline.stats().flow.state).toBe('critical');
    expect(built.pipeline.stats().flow.sourcePaused).toBe(true);
    expect(source.pauseCalls.length).toBeGreaterThan(0);
    expect(built.pipeline.health().ready.ok).toBe(false);
    memory = 0.1;
    await cycles(clock);
    expect(built.pipeline.stats().flow.sourcePaused).toBe(false);
    expect(source.paused.size).toBe(0);
    built.raw.mode = 'auto';
    await built.raw.ack();
    await built.pipeline.stop();
    await running;
    expect(built.log.some((l) => l.includes('backpressure normal -> critical'))).toBe(true);
  });

  it('the degraded batch factor shrinks the spans submitted to raw', async () => {
    const source = new MemoryGroupSource(logsOf('t', 2, 400), 400);
    const p1 = { topic: 't', partition: 1 };
    source.pause([p1]);
    const clock = new ManualClock();
    const built = await build(source, {
      scheduler: clock,
      memoryUsage: () => 850,
      raw: (r) => (r.mode = 'manual'),
      config: {
        memoryLimitBytes: 1000,
        maxBatchRecords: 100,
        flowControl: {
          byteBudget: { bytes: 64 * 1024, warmUp: { fraction: 1 } },
          // Every piece costs its bytes as read: the budget holds all 800 records.
          expansion: { seedRatio: 1 },
        },
      },
    });
    const running = built.pipeline.run();
    // Partition 0 is read at full size while the state is still normal.
    await until(() => built.raw.submitted === 4);
    expect(built.pipeline.stats().flow.state).toBe('normal');
    await cycles(clock);
    expect(built.pipeline.stats().flow.state).toBe('degraded');
    source.resume([p1]);
    await until(() => built.raw.submitted === 12);
    built.raw.mode = 'auto';
    await built.raw.ack();
    const stats = await running;
    // 400 records at factor 1 (100 per span), then 400 at factor 0.5 (50 per span).
    expect(stats.raw.submittedBatches).toBe(12);
  });

  it('counts the bytes of every record read, also when stop() cuts a batch short', async () => {
    const source = new MemoryStoreSource(logsOf('t', 1, 100), 100);
    const built = await build(source, {
      raw: (r) => (r.mode = 'manual'),
      config: {
        maxBatchRecords: 10,
        flowControl: { byteBudget: { bytes: 4096, warmUp: { fraction: 1 } } },
      },
    });
    const running = built.pipeline.run();
    await until(() => built.pipeline.stats().flow.budget.waiters > 0);
    const stopping = built.pipeline.stop();
    built.raw.mode = 'auto';
    await built.raw.ack();
    const stats = await stopping;
    await running;
    const records = makeRecords('t', 0, 100);
    expect(stats.raw.submittedRecords).toBeLessThan(100);
    expect(stats.source.records).toBe(100);
    expect(stats.source.bytes).toBe(
      batchBytes({ span: { topic: 't', partition: 0, start: 0, end: 100 }, records }),
    );
  });
});
