import { randomBytes } from 'node:crypto';
import { compressLz4FrameSync, decompressLz4FrameSync } from '@thalweg/wire-compression';
import { emit, jsonLines, mbPerSecond, medianMs } from './measure.js';

// LZ4 frame compress and decompress throughput on a 10 MB buffer, for a
// compressible payload (JSON lines) and an incompressible one (random bytes),
// with the default options and with the content checksum on.
const SIZE = 10 * 1024 * 1024;
for (const [data, name, contentChecksum] of [
  [jsonLines(SIZE), 'json-lines', false],
  [jsonLines(SIZE), 'json-lines', true],
  [new Uint8Array(randomBytes(SIZE)), 'random', false],
] as const) {
  const options = { contentChecksum };
  const frame = compressLz4FrameSync(data, options);
  const compressMs = medianMs(() => compressLz4FrameSync(data, options));
  const decompressMs = medianMs(() => decompressLz4FrameSync(frame));
  emit({
    bench: 'lz4-frame',
    data: name,
    content_checksum: contentChecksum,
    bytes: SIZE,
    ratio: Number((SIZE / frame.byteLength).toFixed(2)),
    compress_ms: Number(compressMs.toFixed(2)),
    compress_mb_per_s: mbPerSecond(SIZE, compressMs),
    decompress_ms: Number(decompressMs.toFixed(2)),
    decompress_mb_per_s: mbPerSecond(SIZE, decompressMs),
  });
}
