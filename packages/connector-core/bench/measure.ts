/**
 * Runs `op` repeatedly for about `ms` milliseconds after a warm-up and
 * returns operations per second. Benchmarks print JSON lines and compare
 * against baselines measured in the same run; nothing asserts on time.
 */
export function opsPerSecond(op: () => unknown, ms = 1000): number {
  const warmUntil = performance.now() + Math.min(200, ms / 4);
  while (performance.now() < warmUntil) op();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 256; i++) op();
    n += 256;
    now = performance.now();
  }
  return Math.round((n * 1000) / (now - start));
}

export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
