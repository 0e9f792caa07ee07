import { fullGc } from '@thalweg/test-services';

// A full collection before each timed run, so that neither side pays for the
// garbage the other left (the bench data alone is a few hundred MB of heap).
const collect = fullGc();

/**
 * Median wall time of `op` over `runs` runs, after one warm-up run.
 * Benchmarks print JSON lines and compare against baselines measured in the
 * same run; nothing asserts on time.
 */
export function medianMs(op: () => unknown, runs: number): number {
  op();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    collect();
    const start = performance.now();
    op();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
