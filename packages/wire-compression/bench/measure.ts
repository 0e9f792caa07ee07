/**
 * Median wall time of `op` over `runs` runs after one warm-up run.
 * Benchmarks print JSON lines and compare against baselines measured in the
 * same run; nothing asserts on time.
 */
export function medianMs(op: () => unknown, runs = 7): number {
  op();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    op();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

export function mbPerSecond(bytes: number, ms: number): number {
  return Math.round(bytes / 1e6 / (ms / 1000));
}

export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** About `bytes` of newline-delimited JSON records: the shape of a typical payload stream. */
export function jsonLines(bytes: number): Uint8Array {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `{"id":${i},"user":"user-${(i * 7919) % 100_003}","amount":${((i * 37) % 100_000) / 100},"ts":${1_700_000_000_000 + i * 13}}\n`;
    parts.push(line);
    size += line.length;
  }
  return new Uint8Array(Buffer.from(parts.join('')).subarray(0, bytes));
}
