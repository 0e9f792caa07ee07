import { sinkId, type QuarantineEntry } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import type { QuarantinedRecord } from '../src/index.js';
import { build, type BuildOptions } from './doubles/harness.js';
import { ingestWithoutSecondary } from './doubles/raw-ahead.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';

// Recovery replaying a span its sink refuses alone (ADR 0025): quarantined as
// on the live lane, a poison span held vacuously so no pass meets it again.

const SEC = sinkId('sec0');

async function recover(secondary: BuildOptions['secondary']) {
  const { coverage, rawHeld } = await ingestWithoutSecondary(40);
  const entries: QuarantineEntry<QuarantinedRecord>[] = [];
  const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
    coverage,
    rawHeld,
    secondaries: 1,
    ...(secondary === undefined ? {} : { secondary }),
    quarantineWriter: async (e) => {
      entries.push(e);
    },
    config: { recovery: { role: 'recovery', windowRecords: 10 } },
  });
  const stats = await built.pipeline.run({ untilCaughtUp: true });
  const covered = await coverage.covered({ sink: SEC, topic: 't', partition: 0 });
  return { stats, entries, covered: covered.ranges(), log: built.log };
}

describe('recovery meeting a batch its sink refuses alone', () => {
  it('a poison refusal at submit is quarantined as contract and held, and recovery catches up', async () => {
    const { stats, entries, covered } = await recover(
      (s) => (s.refuseBatch = (span) => (span.start === 10 ? 'poison' : null)),
    );
    expect(stats.state).toBe('stopped');
    expect(entries.map((e) => [e.reason, e.record.offset])).toEqual(
      Array.from({ length: 10 }, (_, i) => ['contract', 10 + i]),
    );
    expect(covered).toEqual([{ start: 0, end: 40 }]);
    expect(stats.secondaries[0]?.deliveredRecords).toBe(30);
  });

  it('a batch whose retries ran out at submit is quarantined as retry-exhausted and stays a gap', async () => {
    let refusing = true;
    const { coverage, rawHeld } = await ingestWithoutSecondary(40);
    const entries: QuarantineEntry<QuarantinedRecord>[] = [];
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 40), 10), {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) =>
        (s.refuseBatch = (span) => {
          if (!refusing || span.start !== 20) return null;
          refusing = false; // the destination is healthy again by the next pass
          return 'transient';
        }),
      quarantineWriter: async (e) => {
        entries.push(e);
      },
      config: { recovery: { role: 'recovery', windowRecords: 10, scanEveryMs: 1 } },
    });
    const stats = await built.pipeline.run({ untilCaughtUp: true });
    expect(entries.map((e) => e.reason)).toEqual(Array(10).fill('retry-exhausted'));
    // Left a gap, so the next pass replayed it once the sink took it.
    const covered = await coverage.covered({ sink: SEC, topic: 't', partition: 0 });
    expect(covered.ranges()).toEqual([{ start: 0, end: 40 }]);
    expect(stats.secondaries[0]?.deliveredRecords).toBe(40);
  });

  it('a poison batch its ack lane sets aside during a replay is held, so no pass replays it again', async () => {
    const { stats, covered, log } = await recover(
      (s) =>
        (s.setAsideWith = (span) =>
          span.start === 30 ? { reason: 'poison', error: new Error('refused (injected)') } : null),
    );
    expect(stats.state).toBe('stopped');
    expect(covered).toEqual([{ start: 0, end: 40 }]);
    expect(log.some((l) => l.includes('set aside t/0[30,40) (poison)'))).toBe(true);
  });
});
