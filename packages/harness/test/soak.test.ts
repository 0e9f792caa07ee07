import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeFlat, DEFAULT_TOLERANCES, type SoakSample } from '../src/soak-flatness.js';
import { runSoak } from '../src/soak-run.js';

function sample(i: number, over: Partial<SoakSample> = {}): SoakSample {
  return {
    soak: 'sample',
    t_s: i,
    phase: 'ingest',
    records: i * 1000,
    rss_mb: 200,
    heap_mb: 40,
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
});

describe('the soak, short', () => {
  it('keeps RSS, descriptors, coverage size and lease keys flat, and catches the secondary up', async () => {
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
    expect(result.verdicts.filter((v) => !v.flat)).toEqual([]);
  }, 120_000);
});
