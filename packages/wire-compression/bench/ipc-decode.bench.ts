import { execFileSync } from 'node:child_process';
import {
  BatchBuilder,
  BatchSchema,
  column,
  compressIpcBodies,
  decodeIpcStream,
  encodeIpcStream,
  type IpcBodyEncoder,
} from '@thalweg/stream-arrow';
import { compressIpcStreamLz4, ipcBodyCodecs } from '@thalweg/wire-compression';
import { emit, medianMs } from './measure.js';

// stream-arrow's `decode-checked` on compressed bodies: the same one million
// rows of five columns as stream-arrow's bench, as one IPC message, its
// bodies LZ4_FRAME (our writer) or ZSTD (the `zstd` tool, level 3, buffer by
// buffer: this package writes no zstd), decoded by the one reader with these
// codecs. `plain_ms` is the uncompressed message decoded in the same run.
const ROWS = 1_000_000;
const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: true },
    { name: 'score', type: column.float64, nullable: false },
    { name: 'ts', type: column.timestamp('us'), nullable: false },
    { name: 'payload', type: column.binary, nullable: false },
  ],
});
const base = 1_700_000_000_000_000;
const columns = {
  id: Array.from({ length: ROWS }, (_, i) => 9_007_199_254_740_993n + BigInt(i * 7)),
  name: Array.from({ length: ROWS }, (_, i) =>
    i % 50 === 7 ? null : i % 20 === 3 ? `usér-${i % 10_007}-${i}` : `user-${i % 10_007}-${i}`,
  ),
  score: Array.from({ length: ROWS }, (_, i) => (i % 100_000) / 8),
  ts: Array.from({ length: ROWS }, (_, i) => BigInt(base + i * 1000)),
  payload: Array.from({ length: ROWS }, (_, i) => {
    const p = new Uint8Array(16 + (i % 32));
    p[0] = i & 0xff;
    p[p.length - 1] = (i >> 8) & 0xff;
    return p;
  }),
};
const plain = encodeIpcStream(new BatchBuilder(schema).fromColumns(columns));
const plainMs = medianMs(() => decodeIpcStream(plain, { expect: schema }), 5);

const zstdTool: IpcBodyEncoder = {
  codec: 'zstd',
  compress: (bytes) =>
    new Uint8Array(execFileSync('zstd', ['-3', '-c', '-q'], { input: bytes, maxBuffer: 1 << 30 })),
};

for (const [codec, compress] of [
  ['lz4-frame', () => compressIpcStreamLz4(plain)],
  ['zstd', () => compressIpcBodies(plain, zstdTool)],
] as const) {
  let message: Uint8Array;
  try {
    message = compress();
  } catch (error) {
    emit({ bench: 'decode-checked', codec, skipped: String(error) });
    continue;
  }
  const options = { expect: schema, codecs: ipcBodyCodecs, maxDecompressedBytes: 1 << 30 };
  const ms = medianMs(() => decodeIpcStream(message, options), 5);
  emit({
    bench: 'decode-checked',
    codec,
    rows: ROWS,
    cols: 5,
    bytes: plain.byteLength,
    compressed_bytes: message.byteLength,
    ms: Number(ms.toFixed(1)),
    mb_per_s: Math.round(plain.byteLength / 1e3 / ms),
    plain_ms: Number(plainMs.toFixed(1)),
  });
}
