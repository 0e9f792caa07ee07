import { execFileSync } from 'node:child_process';
import { decompressZstd } from '@thalweg/wire-compression';
import { emit, jsonLines, mbPerSecond, medianMs } from './measure.js';

// zstd decode throughput on a 10 MB buffer. There is no zstd encoder in the
// package (decode only, by design), so the input is compressed by the `zstd`
// tool at level 3, the level Parquet writers default to.
const SIZE = 10 * 1024 * 1024;
const data = jsonLines(SIZE);
let frame: Uint8Array | undefined;
try {
  frame = new Uint8Array(
    execFileSync('zstd', ['-3', '-c', '-q'], { input: data, maxBuffer: 1 << 28 }),
  );
} catch (error) {
  emit({ bench: 'zstd-decode', skipped: `zstd tool not available: ${String(error)}` });
}
if (frame !== undefined) {
  const input = frame;
  const ms = medianMs(() => decompressZstd(input));
  emit({
    bench: 'zstd-decode',
    data: 'json-lines',
    bytes: SIZE,
    ratio: Number((SIZE / input.byteLength).toFixed(2)),
    decompress_ms: Number(ms.toFixed(2)),
    decompress_mb_per_s: mbPerSecond(SIZE, ms),
  });
}
