// `pnpm --filter @thalweg/wire-compression bench`: one JSON object per line.
await import('./lz4-frame.bench.js');
await import('./zstd.bench.js');
await import('./ipc-decode.bench.js');
