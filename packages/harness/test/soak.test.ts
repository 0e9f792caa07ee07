import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  judgeFlat,
  DEFAULT_TOLERANCES,
  SHORT_RUN_TOLERANCES,
  type SoakSample,
} from '../src/soak-flatness.js';
import { runSoak } from '../src/soak-run.js';

function sample(i: number, over: Partial<SoakSample> = {}): SoakSample {
  return {
    soak: 'sample',
    t_s: i,
    phase: 'ingest',
    records: i * 1000,
    rss_mb: 200,
    heap_mb: 40,
    live_mb: 60,
    fds: 30,
    coverage_ranges: 10,
    coverage_log: 0,
    lease_keys: 5,
    lag: 0,
    shed_records: 0,
    replayed_records: 0,
    ...over,
  };
}

describe('soak flatness', () => {
  it('finds a measure that grows after warm-up, and only that one', () => {
    // A local log growing by one entry a sample, as LevelDB's did with no durable tier.
    const samples = Array.from({ length: 50 }, (_, i) => sample(i, { coverage_log: i }));
    const verdicts = judgeFlat(samples, DEFAULT_TOLERANCES);
    expect(verdicts.filter((v) => !v.flat).map((v) => v.measure)).toEqual(['coverage_log']);
  });

  it('judges the ingest samples only, and refuses too few of them', () => {
    const samples = [
      ...Array.from({ length: 20 }, (_, i) => sample(i)),
      ...Array.from({ length: 5 }, (_, i) => sample(20 + i, { phase: 'catch-up', lease_keys: 90 })),
    ];
    expect(judgeFlat(samples, DEFAULT_TOLERANCES).every((v) => v.flat)).toBe(true);
    expect(() => judgeFlat(samples.slice(15), DEFAULT_TOLERANCES)).toThrow(/at least 10 samples/);
  });

  it('judges only the measures its tolerances name: a short run leaves RSS out, not live memory', () => {
    // RSS warming up over the whole run, live memory level.
    const warming = Array.from({ length: 50 }, (_, i) => sample(i, { rss_mb: 100 + 5 * i }));
    expect(judgeFlat(warming, DEFAULT_TOLERANCES).find((v) => !v.flat)?.measure).toBe('rss_mb');
    const short = judgeFlat(warming, SHORT_RUN_TOLERANCES);
    expect(short.map((v) => v.measure)).not.toContain('rss_mb');
    expect(short.every((v) => v.flat)).toBe(true);
    // Buffers held a little more each sample: a leak the short run catches.
    const leaking = Array.from({ length: 50 }, (_, i) => sample(i, { live_mb: 60 + 3 * i }));
    expect(judgeFlat(leaking, SHORT_RUN_TOLERANCES).filter((v) => !v.flat)).toEqual([
      expect.objectContaining({ measure: 'live_mb', flat: false }),
    ]);
  });
});

describe('the soak, short', () => {
  it('keeps live memory, descriptors, coverage size and lease keys flat, and catches the secondary up', async () => {
    const lines: string[] = [];
    const result = await runSoak({
      dir: await mkdtemp(join(tmpdir(), 'twg-soak-')),
      records: 2_000_000,
      partitions: 4,
      batchSize: 1000,
      payloadBytes: 64,
      sampleMs: 50,
      // Each stall lasts until the lane has shed (no time bound), however
      // fast or slow the machine is.
      stallEvery: 200,
      stallMs: 0,
      // What is in flight grows until the budget is full; a small budget
      // fills in the warm-up fifth, so the rest is the steady state.
      budgetBytes: 8 * 2 ** 20,
      // Live memory is read after a full collection: what is retained.
      collectGarbage: true,
      // A run of two seconds: RSS is warm-up all through (SHORT_RUN_TOLERANCES).
      tolerances: SHORT_RUN_TOLERANCES,
      keep: false,
      emit: (line) => lines.push(line),
    });
    // The series is JSON lines, the result last.
    const parsed = lines.map((l) => JSON.parse(l) as { soak: string });
    expect(parsed.at(-1)?.soak).toBe('result');
    expect(result.raw_durable).toBe(2_000_000);
    // The lane shed and recovery repaired it: the faults the soak is about happened.
    expect(result.shed_records).toBeGreaterThan(0);
    expect(result.replayed_records).toBeGreaterThanOrEqual(result.shed_records);
    expect(result.leases_cleared).toBeGreaterThan(0);
    expect(result.lag_after).toBe(0);
    expect(result.verdicts.map((v) => v.measure)).toContain('live_mb');
    expect(result.verdicts.filter((v) => !v.flat)).toEqual([]);
  }, 120_000);
});
