/**
 * Median wall time of an async `op` over `runs` runs after one warm-up run.
 * Benchmarks print JSON lines and compare against a baseline measured in
 * the same run; nothing asserts on time.
 */
export async function medianMs(op: () => Promise<unknown>, runs: number): Promise<number> {
  await op();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await op();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
